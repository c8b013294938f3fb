#define _GNU_SOURCE
#include "fileguard.h"
#ifdef __linux__
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_REGIONS 32
struct region { const char *base; size_t size; volatile size_t fault; };
static struct region regions[MAX_REGIONS];
static volatile int installed;
volatile int bleanalyze_fileguard_faults;

static void handler(int sig, siginfo_t *info, void *context) {
    (void)context;
    const char *addr = (const char *)info->si_addr;
    for (int i = 0; i < MAX_REGIONS; i++) {
        const char *base = regions[i].base;
        if (base && addr >= base && addr < base + regions[i].size) {
            long page = sysconf(_SC_PAGESIZE);
            char *start = (char *)((uintptr_t)addr & ~((uintptr_t)page - 1));
            // Replace the vanished page by zeros and retry the access.
            if (mmap(start, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) break;
            size_t offset = (size_t)(start < base ? 0 : start - base);
            if (offset < regions[i].fault) regions[i].fault = offset;
            bleanalyze_fileguard_faults++;
            return;
        }
    }
    // Not ours: the default action (terminate with SIGBUS).
    signal(sig, SIG_DFL);
    raise(sig);
}

int bleanalyze_fileguard_register(const void *base, size_t size) {
    if (!installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = handler;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGBUS, &sa, NULL) != 0) return -1;
        installed = 1;
    }
    for (int i = 0; i < MAX_REGIONS; i++) {
        if (__sync_bool_compare_and_swap(&regions[i].base, NULL, (const char *)base)) {
            regions[i].size = size;
            regions[i].fault = (size_t)-1;
            return 0;
        }
    }
    return -1;
}

void bleanalyze_fileguard_unregister(const void *base) {
    for (int i = 0; i < MAX_REGIONS; i++) {
        if (regions[i].base == (const char *)base) { regions[i].size = 0; regions[i].base = NULL; }
    }
}

size_t bleanalyze_fileguard_fault_offset(const void *base) {
    for (int i = 0; i < MAX_REGIONS; i++) {
        if (regions[i].base == (const char *)base) return regions[i].fault;
    }
    return (size_t)-1;
}
#else
volatile int bleanalyze_fileguard_faults;
int bleanalyze_fileguard_register(const void *base, size_t size) { (void)base; (void)size; return -1; }
void bleanalyze_fileguard_unregister(const void *base) { (void)base; }
size_t bleanalyze_fileguard_fault_offset(const void *base) { (void)base; return (size_t)-1; }
#endif
