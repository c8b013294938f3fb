/*
 * gen_btsnoop — deterministic, protocol-valid BLE HCI capture for `make bench`.
 *
 * Writes a btsnoop v1 file, datalink 1002 (H4), seen from the host of a BLE central:
 *   - Reset, Read Local Version, Read BD_ADDR, Read Buffer Size, LE Read Buffer Size (27 bytes x 8),
 *     Set Event Mask, LE Set Event Mask, LE Set Scan Parameters, LE Set Scan Enable;
 *   - LE Advertising Reports from a few hundred advertisers for the whole capture (ADV_IND with Flags,
 *     Complete Local Name, 16-bit Service UUIDs, Manufacturer Specific Data; SCAN_RSP with TX power);
 *   - LE Create Connection / Command Status / LE Connection Complete, one attempt at a time, several
 *     connections open at once, handles reused after Disconnection Complete (reason 0x13);
 *   - per connection: LE Data Length Change, ATT Exchange MTU (247), Read By Group Type discovery,
 *     Read By Type discovery (omitted with --no-read-by-type: btmon 5.66 crashes on it), Find
 *     Information, Read Request (device name), CCCD Write Request/Response, then a long stream of Handle
 *     Value Notifications received and Write Commands sent;
 *   - host -> controller ACL is fragmented over the 27-byte LE ACL buffers (PB 00 then PB 01); some
 *     controller -> host PDUs arrive fragmented too (PB 10 then PB 01);
 *   - Number Of Completed Packets gives the credits back; never more than 8 packets outstanding;
 *   - timestamps in µs, increasing, connection events one connection interval apart.
 *
 * --shape writes (the second bench shape): short connections (~20x more of them, so discovery is a
 * large share of the frames), and a stream that is mostly host writes — half of them Write Requests
 * answered by Write Responses in a later connection event, with Read Requests of the device name —
 * instead of mostly notifications.
 *
 * Deterministic: same --frames/--seed/--no-read-by-type/--shape -> same bytes.
 *
 * Usage: gen_btsnoop --frames N [--seed S] [--no-read-by-type] [--shape notify|writes] -o FILE
 * The file has at least N frames (open connections are closed cleanly after the N-th).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------- deterministic PRNG (splitmix64) ---------- */
static uint64_t rng_state;
static uint64_t rnd(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static uint32_t rnd_below(uint32_t n) { return (uint32_t)(rnd() % n); }
static uint32_t rnd_range(uint32_t lo, uint32_t hi) { return lo + rnd_below(hi - lo + 1); } /* inclusive */

/* ---------- output ---------- */
#define OUT_CAP (8u << 20)
static uint8_t *out;
static size_t out_len;
static FILE *out_file;
static uint64_t frames, bytes_written;
static uint64_t now_us;        /* µs since the Unix epoch */
static uint64_t last_ts;

static void flush_out(void) {
    if (out_len && fwrite(out, 1, out_len, out_file) != out_len) { perror("write"); exit(1); }
    bytes_written += out_len;
    out_len = 0;
}
static void put32be(uint8_t *p, uint32_t v) { p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v; }
static void put64be(uint8_t *p, uint64_t v) { put32be(p, (uint32_t)(v >> 32)); put32be(p + 4, (uint32_t)v); }

#define BTSNOOP_EPOCH_DELTA 0x00dcddb30f2f8000ULL
enum { DIR_SENT = 0, DIR_RECV = 1 };
enum { H4_CMD = 1, H4_ACL = 2, H4_EVT = 4 };

/* One record: `len` bytes of H4 packet (type byte included). */
static void record(int dir, int h4type, const uint8_t *pkt, uint32_t len) {
    if (out_len + 24 + len > OUT_CAP) flush_out();
    uint8_t *p = out + out_len;
    uint32_t flags = (uint32_t)dir | ((h4type == H4_CMD || h4type == H4_EVT) ? 2u : 0u);
    uint64_t ts = now_us > last_ts ? now_us : last_ts + 1;
    last_ts = ts;
    put32be(p, len); put32be(p + 4, len); put32be(p + 8, flags); put32be(p + 12, 0);
    put64be(p + 16, ts + BTSNOOP_EPOCH_DELTA);
    memcpy(p + 24, pkt, len);
    out_len += 24 + len;
    frames++;
}

static uint8_t pkt[1100];
static void put16(uint8_t *p, uint16_t v) { p[0] = v; p[1] = v >> 8; }

static void command(uint16_t opcode, const uint8_t *params, uint8_t plen) {
    pkt[0] = H4_CMD; put16(pkt + 1, opcode); pkt[3] = plen;
    if (plen) memcpy(pkt + 4, params, plen);
    record(DIR_SENT, H4_CMD, pkt, 4u + plen);
}
static void event(uint8_t code, const uint8_t *params, uint8_t plen) {
    pkt[0] = H4_EVT; pkt[1] = code; pkt[2] = plen;
    if (plen) memcpy(pkt + 3, params, plen);
    record(DIR_RECV, H4_EVT, pkt, 3u + plen);
}
/* Command Complete with status 0 followed by `rlen` return bytes. */
static void command_complete(uint16_t opcode, const uint8_t *ret, uint8_t rlen) {
    uint8_t p[64]; p[0] = 1; put16(p + 1, opcode); p[3] = 0;
    if (rlen) memcpy(p + 4, ret, rlen);
    event(0x0e, p, 4 + rlen);
}
static void command_status(uint16_t opcode) {
    uint8_t p[4] = { 0x00, 0x01, (uint8_t)opcode, (uint8_t)(opcode >> 8) };
    event(0x0f, p, 4);
}

/* ---------- flow control (LE ACL buffers: 27 bytes x 8) ---------- */
#define LE_ACL_LEN 27
#define LE_ACL_NUM 8
#define MAX_CONN 12
#define HANDLE_BASE 0x0040

struct conn {
    int open;
    uint16_t handle;
    int advertiser;
    uint32_t interval_us;
    uint64_t next_event;
    int step;              /* discovery script position; STREAM when done */
    uint32_t stream_left;  /* frames still to stream before the peer disconnects */
    int notify_weight;     /* 0..100: share of notifications vs writes */
    uint16_t outstanding;  /* ACL packets sent, not yet completed */
    uint32_t seq;
};
static struct conn conns[MAX_CONN];
static int outstanding_total;

static void nocp(struct conn *c) {
    if (!c->outstanding) return;
    uint8_t p[5]; p[0] = 1; put16(p + 1, c->handle); put16(p + 3, c->outstanding);
    event(0x13, p, 5);
    outstanding_total -= c->outstanding;
    c->outstanding = 0;
}
/* All handles with outstanding packets in one event (the controller batches them). */
static void nocp_all(void) {
    uint8_t p[1 + 4 * MAX_CONN]; int n = 0;
    for (int i = 0; i < MAX_CONN; i++) if (conns[i].open && conns[i].outstanding) {
        put16(p + 1 + 4 * n, conns[i].handle); put16(p + 3 + 4 * n, conns[i].outstanding);
        outstanding_total -= conns[i].outstanding; conns[i].outstanding = 0; n++;
    }
    if (!n) return;
    p[0] = (uint8_t)n;
    event(0x13, p, (uint8_t)(1 + 4 * n));
}

/* L2CAP basic frame on CID 4 (ATT) carrying `att` (alen bytes). Sent: fragmented to 27 bytes with flow
 * control. Received: fragmented to `rx_frag` bytes (27 without DLE, 251 with). */
static void acl_att(struct conn *c, int dir, const uint8_t *att, uint16_t alen, uint16_t rx_frag) {
    uint8_t l2[4 + 600];
    put16(l2, alen); put16(l2 + 2, 0x0004);
    memcpy(l2 + 4, att, alen);
    uint32_t total = 4u + alen, off = 0;
    uint16_t frag = dir == DIR_SENT ? LE_ACL_LEN : rx_frag;
    int first = 1;
    while (off < total) {
        uint32_t n = total - off; if (n > frag) n = frag;
        if (dir == DIR_SENT) {
            if (outstanding_total >= LE_ACL_NUM) { now_us += 150; nocp_all(); }
        }
        uint16_t pb = first ? (dir == DIR_SENT ? 0 : 2) : 1;
        pkt[0] = H4_ACL; put16(pkt + 1, (uint16_t)(c->handle | (pb << 12))); put16(pkt + 3, (uint16_t)n);
        memcpy(pkt + 5, l2 + off, n);
        record(dir, H4_ACL, pkt, 5 + n);
        if (dir == DIR_SENT) { c->outstanding++; outstanding_total++; }
        off += n; first = 0;
        now_us += dir == DIR_SENT ? 20 : 300 + rnd_below(100);
    }
}

/* ---------- advertisers ---------- */
#define NADV 300
struct adv { uint8_t addr[6]; uint8_t addr_type; int8_t rssi; uint16_t company; int connected; };
static struct adv advs[NADV];

static void adv_report(void) {
    int i = (int)rnd_below(NADV);
    struct adv *a = &advs[i];
    uint8_t p[64], ad[31]; int n = 0;
    int scan_rsp = rnd_below(5) == 0;
    if (!scan_rsp) {
        ad[n++] = 2; ad[n++] = 0x01; ad[n++] = 0x06;                            /* Flags */
        ad[n++] = 9; ad[n++] = 0x09; n += sprintf((char *)ad + n, "Dev-%04d", i); /* Complete Local Name */
        ad[n++] = 3; ad[n++] = 0x03; put16(ad + n, 0x180F); n += 2;              /* 16-bit UUIDs: Battery */
        ad[n++] = 7; ad[n++] = 0xFF; put16(ad + n, a->company); n += 2;          /* Manufacturer data */
        for (int k = 0; k < 4; k++) ad[n++] = (uint8_t)rnd();
    } else {
        ad[n++] = 2; ad[n++] = 0x0A; ad[n++] = (uint8_t)(int8_t)-4;              /* TX Power Level */
        ad[n++] = 5; ad[n++] = 0x12; put16(ad + n, 0x0006); put16(ad + n + 2, 0x0C80); n += 4; /* Slave Conn Interval Range */
    }
    int q = 0;
    p[q++] = 0x02;                 /* LE Advertising Report */
    p[q++] = 1;                    /* num reports */
    p[q++] = scan_rsp ? 0x04 : 0x00;
    p[q++] = a->addr_type;
    memcpy(p + q, a->addr, 6); q += 6;
    p[q++] = (uint8_t)n; memcpy(p + q, ad, n); q += n;
    p[q++] = (uint8_t)(int8_t)(a->rssi + (int)rnd_below(7) - 3);
    event(0x3e, p, (uint8_t)q);
}

/* ---------- GATT server of every peer (fixed) ----------
 * 0x0001 Service 0x1800 | 0x0002 decl read -> 0x0003 0x2A00 Device Name | 0x0004 decl read -> 0x0005 0x2A01
 * 0x0006 Service 0x1801 | 0x0007 decl indicate -> 0x0008 0x2A05 | 0x0009 CCCD
 * 0x000A Service (128-bit vendor) | 0x000B decl notify -> 0x000C (128-bit) | 0x000D CCCD
 *                                  | 0x000E decl write|write-without-response -> 0x000F (128-bit)
 * The streamed characteristics are vendor 128-bit ones so that no dissector interprets their bytes
 * (tshark decodes e.g. Heart Rate Measurement values and flags random bytes as malformed). */
#define H_NOTIFY 0x000C
#define H_CCCD   0x000D
#define H_WRITE  0x000F
/* 6e40xxxx-b5a3-f393-e0a9-e50e24dcca9e style base, little-endian on the wire, xxxx at bytes 12..13 */
static void uuid128(uint8_t *p, uint16_t short_id) {
    static const uint8_t base[16] = { 0x9e, 0xca, 0xdc, 0x24, 0x0e, 0xe5, 0xa9, 0xe0,
                                      0x93, 0xf3, 0xa3, 0xb5, 0x00, 0x00, 0x42, 0x7a };
    memcpy(p, base, 16); p[12] = (uint8_t)short_id; p[13] = (uint8_t)(short_id >> 8);
}

static int no_read_by_type;
static int shape_writes;   /* --shape writes */
enum { ST_DLE, ST_MTU, ST_RBGT1, ST_RBGT2, ST_RBGT3, ST_RBT1, ST_RBT2, ST_RBT3,
       ST_FI1, ST_FI2, ST_FI3, ST_FI4, ST_FI5, ST_READ, ST_CCCD, ST_STREAM };

static void att_err(struct conn *c, uint8_t req, uint16_t handle, uint8_t code) {
    uint8_t a[5] = { 0x01, req, (uint8_t)handle, (uint8_t)(handle >> 8), code };
    acl_att(c, DIR_RECV, a, 5, LE_ACL_LEN);
}
/* A request sent, its packet completed, the response received in a later connection event. */
static void request(struct conn *c, const uint8_t *a, uint16_t n) {
    acl_att(c, DIR_SENT, a, n, 0);
    now_us += 1000; nocp(c);
    now_us += 1000;
}
static void request_range(struct conn *c, uint8_t op, uint16_t start, uint16_t type) {
    uint8_t a[7]; int n = 5;
    a[0] = op; put16(a + 1, start); put16(a + 3, 0xFFFF);
    if (type) { put16(a + 5, type); n = 7; }
    request(c, a, (uint16_t)n);
}
/* Find Information Response entry list */
static int fi_16(uint8_t *a, int n, uint16_t h, uint16_t t) { put16(a + n, h); put16(a + n + 2, t); return n + 4; }

static void discovery_step(struct conn *c) {
    uint8_t a[300]; int n;
    switch (c->step) {
    case ST_DLE: {   /* LE Data Length Change: 251 bytes each way */
        uint8_t q[11]; q[0] = 0x07; put16(q + 1, c->handle);
        put16(q + 3, 251); put16(q + 5, 2120); put16(q + 7, 251); put16(q + 9, 2120);
        event(0x3e, q, 11);
        break;
    }
    case ST_MTU:
        a[0] = 0x02; put16(a + 1, 247); request(c, a, 3);
        a[0] = 0x03; put16(a + 1, 247); acl_att(c, DIR_RECV, a, 3, LE_ACL_LEN);
        break;
    case ST_RBGT1:   /* primary services, 16-bit ones first */
        request_range(c, 0x10, 0x0001, 0x2800);
        n = 0; a[n++] = 0x11; a[n++] = 6;
        put16(a + n, 0x0001); put16(a + n + 2, 0x0005); put16(a + n + 4, 0x1800); n += 6;
        put16(a + n, 0x0006); put16(a + n + 2, 0x0009); put16(a + n + 4, 0x1801); n += 6;
        acl_att(c, DIR_RECV, a, (uint16_t)n, LE_ACL_LEN);
        break;
    case ST_RBGT2:   /* then the 128-bit one: 24 bytes of L2CAP */
        request_range(c, 0x10, 0x000A, 0x2800);
        n = 0; a[n++] = 0x11; a[n++] = 20;
        put16(a + n, 0x000A); put16(a + n + 2, 0x000F); uuid128(a + n + 4, 0x0001); n += 20;
        acl_att(c, DIR_RECV, a, (uint16_t)n, LE_ACL_LEN);
        break;
    case ST_RBGT3:
        request_range(c, 0x10, 0x0010, 0x2800);
        att_err(c, 0x10, 0x0010, 0x0A);
        break;
    case ST_RBT1:    /* characteristics: 16-bit ones (23 bytes of ATT) */
        if (no_read_by_type) break;
        request_range(c, 0x08, 0x0001, 0x2803);
        n = 0; a[n++] = 0x09; a[n++] = 7;
        put16(a + n, 0x0002); a[n + 2] = 0x02; put16(a + n + 3, 0x0003); put16(a + n + 5, 0x2A00); n += 7;
        put16(a + n, 0x0004); a[n + 2] = 0x02; put16(a + n + 3, 0x0005); put16(a + n + 5, 0x2A01); n += 7;
        put16(a + n, 0x0007); a[n + 2] = 0x20; put16(a + n + 3, 0x0008); put16(a + n + 5, 0x2A05); n += 7;
        acl_att(c, DIR_RECV, a, (uint16_t)n, LE_ACL_LEN);
        break;
    case ST_RBT2:    /* 128-bit ones: 48 bytes of L2CAP, 2 fragments */
        if (no_read_by_type) break;
        request_range(c, 0x08, 0x0008, 0x2803);
        n = 0; a[n++] = 0x09; a[n++] = 21;
        put16(a + n, 0x000B); a[n + 2] = 0x10; put16(a + n + 3, 0x000C); uuid128(a + n + 5, 0x0003); n += 21;
        put16(a + n, 0x000E); a[n + 2] = 0x0C; put16(a + n + 3, 0x000F); uuid128(a + n + 5, 0x0002); n += 21;
        acl_att(c, DIR_RECV, a, (uint16_t)n, LE_ACL_LEN);
        break;
    case ST_RBT3:
        if (no_read_by_type) break;
        request_range(c, 0x08, 0x000F, 0x2803);
        att_err(c, 0x08, 0x000F, 0x0A);
        break;
    case ST_FI1:     /* all attributes with 16-bit types up to 0x000B: 50 bytes of L2CAP, 2 fragments */
        request_range(c, 0x04, 0x0001, 0);
        n = 0; a[n++] = 0x05; a[n++] = 0x01;
        n = fi_16(a, n, 0x0001, 0x2800); n = fi_16(a, n, 0x0002, 0x2803); n = fi_16(a, n, 0x0003, 0x2A00);
        n = fi_16(a, n, 0x0004, 0x2803); n = fi_16(a, n, 0x0005, 0x2A01); n = fi_16(a, n, 0x0006, 0x2800);
        n = fi_16(a, n, 0x0007, 0x2803); n = fi_16(a, n, 0x0008, 0x2A05); n = fi_16(a, n, 0x0009, 0x2902);
        n = fi_16(a, n, 0x000A, 0x2800); n = fi_16(a, n, 0x000B, 0x2803);
        acl_att(c, DIR_RECV, a, (uint16_t)n, LE_ACL_LEN);
        break;
    case ST_FI2:
        request_range(c, 0x04, 0x000C, 0);
        n = 0; a[n++] = 0x05; a[n++] = 0x02; put16(a + n, 0x000C); uuid128(a + n + 2, 0x0003); n += 18;
        acl_att(c, DIR_RECV, a, (uint16_t)n, LE_ACL_LEN);
        break;
    case ST_FI3:
        request_range(c, 0x04, 0x000D, 0);
        n = 0; a[n++] = 0x05; a[n++] = 0x01; n = fi_16(a, n, 0x000D, 0x2902); n = fi_16(a, n, 0x000E, 0x2803);
        acl_att(c, DIR_RECV, a, (uint16_t)n, LE_ACL_LEN);
        break;
    case ST_FI4:
        request_range(c, 0x04, 0x000F, 0);
        n = 0; a[n++] = 0x05; a[n++] = 0x02; put16(a + n, 0x000F); uuid128(a + n + 2, 0x0002); n += 18;
        acl_att(c, DIR_RECV, a, (uint16_t)n, LE_ACL_LEN);
        break;
    case ST_FI5:
        request_range(c, 0x04, 0x0010, 0);
        att_err(c, 0x04, 0x0010, 0x0A);
        break;
    case ST_READ:
        a[0] = 0x0A; put16(a + 1, 0x0003); request(c, a, 3);
        a[0] = 0x0B; n = 1 + sprintf((char *)a + 1, "Dev-%04d", c->advertiser);
        acl_att(c, DIR_RECV, a, (uint16_t)n, LE_ACL_LEN);
        break;
    case ST_CCCD:
        a[0] = 0x12; put16(a + 1, H_CCCD); put16(a + 3, 0x0001); request(c, a, 5);
        a[0] = 0x13; acl_att(c, DIR_RECV, a, 1, LE_ACL_LEN);
        break;
    }
    c->step++;
}

/* One connection event of streaming: a few notifications and/or write commands. */
static void stream_event(struct conn *c) {
    uint8_t a[300];
    int k = (int)rnd_range(1, 4);
    for (int i = 0; i < k; i++) {
        if ((int)rnd_below(100) < c->notify_weight) {
            /* notification: mostly short, some long; long ones mostly in one 251-byte fragment (DLE),
             * every 8th in 27-byte fragments */
            uint16_t vlen = rnd_below(4) == 0 ? (uint16_t)rnd_range(60, 200) : (uint16_t)rnd_range(8, 48);
            a[0] = 0x1B; put16(a + 1, H_NOTIFY);
            uint32_t s = c->seq++;
            for (int j = 0; j < vlen; j++) a[3 + j] = (uint8_t)(s + (uint32_t)j * 7);
            uint16_t frag = (vlen > 48 && (s & 7) == 0) ? LE_ACL_LEN : 251;
            acl_att(c, DIR_RECV, a, (uint16_t)(3 + vlen), frag);
        } else if (shape_writes && rnd_below(8) == 0) {
            /* Read Request of the device name, answered in a later event */
            a[0] = 0x0A; put16(a + 1, 0x0003); request(c, a, 3);
            a[0] = 0x0B; int n = 1 + sprintf((char *)a + 1, "Dev-%04d", c->advertiser);
            acl_att(c, DIR_RECV, a, (uint16_t)n, LE_ACL_LEN);
        } else {
            uint16_t vlen = rnd_below(5) == 0 ? (uint16_t)rnd_range(40, 120) : (uint16_t)rnd_range(4, 20);
            int with_response = shape_writes && rnd_below(2) == 0;
            a[0] = with_response ? 0x12 : 0x52; put16(a + 1, H_WRITE);
            uint32_t s = c->seq++;
            for (int j = 0; j < vlen; j++) a[3 + j] = (uint8_t)(s ^ (uint32_t)j);
            if (with_response) {
                request(c, a, (uint16_t)(3 + vlen));
                a[0] = 0x13; acl_att(c, DIR_RECV, a, 1, LE_ACL_LEN);
            } else {
                acl_att(c, DIR_SENT, a, (uint16_t)(3 + vlen), 0);
            }
        }
    }
    /* the packets sent in this event went over the air: credits come back */
    now_us += 100;
    nocp(c);
}

static void disconnect(struct conn *c) {
    nocp(c);
    uint8_t p[4]; p[0] = 0; put16(p + 1, c->handle); p[3] = 0x13;   /* Remote User Terminated Connection */
    event(0x05, p, 4);
    advs[c->advertiser].connected = 0;
    c->open = 0;
}

int main(int argc, char **argv) {
    uint64_t target = 10000000, seed = 1;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--frames") && i + 1 < argc) target = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--no-read-by-type")) no_read_by_type = 1;
        else if (!strcmp(argv[i], "--shape") && i + 1 < argc && !strcmp(argv[i + 1], "writes")) { shape_writes = 1; i++; }
        else if (!strcmp(argv[i], "--shape") && i + 1 < argc && !strcmp(argv[i + 1], "notify")) { shape_writes = 0; i++; }
        else if (!strcmp(argv[i], "-o") && i + 1 < argc) path = argv[++i];
        else { fprintf(stderr, "usage: %s --frames N [--seed S] [--no-read-by-type] [--shape notify|writes] -o FILE\n", argv[0]); return 2; }
    }
    if (!path || target == 0) { fprintf(stderr, "usage: %s --frames N [--seed S] [--no-read-by-type] [--shape notify|writes] -o FILE\n", argv[0]); return 2; }
    rng_state = seed * 0x2545F4914F6CDD1DULL + 1;
    out = malloc(OUT_CAP);
    out_file = fopen(path, "wb");
    if (!out || !out_file) { perror(path); return 1; }

    /* header */
    memcpy(out, "btsnoop\0", 8); put32be(out + 8, 1); put32be(out + 12, 1002); out_len = 16;
    now_us = 1704067200ULL * 1000000ULL;   /* 2024-01-01T00:00:00Z */

    for (int i = 0; i < NADV; i++) {
        for (int k = 0; k < 6; k++) advs[i].addr[k] = (uint8_t)rnd();
        advs[i].addr_type = (uint8_t)(rnd_below(3) == 0);
        if (advs[i].addr_type) advs[i].addr[5] |= 0xC0;    /* static random */
        advs[i].rssi = (int8_t)-(int)rnd_range(40, 95);
        advs[i].company = (uint16_t)rnd_range(0x0001, 0x0200);
    }

    /* controller setup */
    uint8_t r[16], p[32];
    command(0x0C03, NULL, 0); now_us += 30000; command_complete(0x0C03, NULL, 0);            /* Reset */
    now_us += 500; command(0x1001, NULL, 0); now_us += 500;                                  /* Read Local Version */
    r[0] = 0x0C; put16(r + 1, 0x0000); r[3] = 0x0C; put16(r + 4, 0x000F); put16(r + 6, 0x0000);
    command_complete(0x1001, r, 8);
    now_us += 500; command(0x1009, NULL, 0); now_us += 500;                                  /* Read BD_ADDR */
    r[0] = 0x11; r[1] = 0x22; r[2] = 0x33; r[3] = 0x44; r[4] = 0x55; r[5] = 0x00;
    command_complete(0x1009, r, 6);
    now_us += 500; command(0x1005, NULL, 0); now_us += 500;                                  /* Read Buffer Size */
    put16(r, 1021); r[2] = 0; put16(r + 3, 8); put16(r + 5, 0);
    command_complete(0x1005, r, 7);
    now_us += 500; command(0x2002, NULL, 0); now_us += 500;                                  /* LE Read Buffer Size */
    put16(r, LE_ACL_LEN); r[2] = LE_ACL_NUM;
    command_complete(0x2002, r, 3);
    memset(p, 0xFF, 8); p[7] = 0x3F;
    now_us += 500; command(0x0C01, p, 8); now_us += 500; command_complete(0x0C01, NULL, 0);  /* Set Event Mask */
    memset(p, 0, 8); p[0] = 0xFF; p[1] = 0x01;
    now_us += 500; command(0x2001, p, 8); now_us += 500; command_complete(0x2001, NULL, 0);  /* LE Set Event Mask */
    p[0] = 0x01; put16(p + 1, 0x0060); put16(p + 3, 0x0030); p[5] = 0x00; p[6] = 0x00;
    now_us += 500; command(0x200B, p, 7); now_us += 500; command_complete(0x200B, NULL, 0);  /* LE Set Scan Parameters */
    p[0] = 0x01; p[1] = 0x00;
    now_us += 500; command(0x200C, p, 2); now_us += 500; command_complete(0x200C, NULL, 0);  /* LE Set Scan Enable */

    int pending = -1;            /* connection slot of the LE Create Connection in progress */
    uint64_t pending_done = 0, next_create = now_us + 200000, next_adv = now_us + 1000;
    int want_open = 4;
    uint64_t conn_budget = target / 200 < 2000 ? 2000 : target / 200;   /* ~200 connections whatever N */
    if (shape_writes) conn_budget = target / 4000 < 100 ? 100 : target / 4000;   /* ~4000 connections */

    for (;;) {
        int done = frames >= target;
        int open = 0;
        for (int i = 0; i < MAX_CONN; i++) open += conns[i].open;
        if (done && !open && pending < 0) break;

        /* the earliest thing to happen next */
        uint64_t t = UINT64_MAX; int which = -1;   /* -1 nothing, -2 adv, -3 create, -4 complete, >=0 conn */
        for (int i = 0; i < MAX_CONN; i++)
            if (conns[i].open && conns[i].next_event < t) { t = conns[i].next_event; which = i; }
        if (!done && next_adv < t) { t = next_adv; which = -2; }
        if (!done && pending < 0 && open < want_open && next_create < t) { t = next_create; which = -3; }
        if (pending >= 0 && pending_done < t) { t = pending_done; which = -4; }
        if (which == -1) break;
        if (t > now_us) now_us = t;

        if (which == -2) {
            adv_report();
            next_adv = now_us + rnd_range(5000, 60000);
        } else if (which == -3) {
            int slot = -1;
            for (int i = 0; i < MAX_CONN; i++) if (!conns[i].open) { slot = i; break; }
            int ai; do ai = (int)rnd_below(NADV); while (advs[ai].connected);
            advs[ai].connected = 1;
            int q = 0;
            put16(p + q, 0x0060); q += 2; put16(p + q, 0x0030); q += 2; p[q++] = 0x00;
            p[q++] = advs[ai].addr_type; memcpy(p + q, advs[ai].addr, 6); q += 6; p[q++] = 0x00;
            put16(p + q, 0x0006); q += 2; put16(p + q, 0x0028); q += 2; put16(p + q, 0); q += 2;
            put16(p + q, 0x01F4); q += 2; put16(p + q, 0); q += 2; put16(p + q, 0); q += 2;
            command(0x200D, p, (uint8_t)q);
            now_us += 400; command_status(0x200D);
            pending = slot;
            struct conn *c = &conns[slot];
            memset(c, 0, sizeof *c);
            c->advertiser = ai;
            pending_done = now_us + rnd_range(20000, 400000);
        } else if (which == -4) {
            struct conn *c = &conns[pending];
            /* lowest handle not in use: handles are reused after Disconnection Complete */
            uint16_t h = HANDLE_BASE;
            for (;;) {
                int used = 0;
                for (int i = 0; i < MAX_CONN; i++) if (conns[i].open && conns[i].handle == h) used = 1;
                if (!used) break;
                h++;
            }
            static const uint16_t intervals[4] = { 6, 12, 24, 36 };   /* x 1.25 ms */
            uint16_t iv = intervals[rnd_below(4)];
            c->handle = h; c->open = 1; c->interval_us = iv * 1250u;
            c->next_event = now_us + c->interval_us; c->step = ST_DLE;
            c->stream_left = (uint32_t)rnd_range((uint32_t)(conn_budget / 2), (uint32_t)(conn_budget * 3 / 2));
            c->notify_weight = shape_writes ? (int)rnd_range(5, 25) : (int)rnd_range(30, 95);
            int q = 0;
            p[q++] = 0x01; p[q++] = 0x00; put16(p + q, h); q += 2; p[q++] = 0x00;    /* central */
            p[q++] = advs[c->advertiser].addr_type; memcpy(p + q, advs[c->advertiser].addr, 6); q += 6;
            put16(p + q, iv); q += 2; put16(p + q, 0); q += 2; put16(p + q, 0x01F4); q += 2; p[q++] = 0x00;
            event(0x3e, p, (uint8_t)q);
            pending = -1;
            next_create = now_us + rnd_range(50000, 2000000);
            want_open = (int)rnd_range(3, 8);
        } else {
            struct conn *c = &conns[which];
            uint64_t before = frames;
            if (done && c->step >= ST_STREAM) { disconnect(c); continue; }
            if (c->step < ST_STREAM) discovery_step(c);
            else if (c->stream_left == 0) { disconnect(c); continue; }
            else stream_event(c);
            uint64_t used = frames - before;
            if (c->step >= ST_STREAM) c->stream_left = used >= c->stream_left ? 0 : c->stream_left - (uint32_t)used;
            c->next_event += c->interval_us;
            if (c->next_event < now_us) c->next_event = now_us + c->interval_us / 4;
        }
    }
    flush_out();
    fclose(out_file);
    fprintf(stderr, "gen_btsnoop: %llu frames, %llu bytes, seed %llu%s%s -> %s\n",
            (unsigned long long)frames, (unsigned long long)bytes_written, (unsigned long long)seed,
            no_read_by_type ? ", no Read By Type" : "", shape_writes ? ", shape writes" : "", path);
    return 0;
}
