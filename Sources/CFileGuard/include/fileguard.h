// A guard for memory-mapped input files that shrink while they are read (a log still being written,
// truncated or rotated underneath us). Touching a mapped page past the new end of file raises SIGBUS;
// the handler installed here maps a page of zeros in its place, notes the lowest such offset of the
// region, and lets the read go on, so the reader can stop at that offset with a clear error instead of
// the process dying. Faults outside a registered region keep their default behaviour (a crash).
#ifndef BLEANALYZE_FILEGUARD_H
#define BLEANALYZE_FILEGUARD_H
#include <stddef.h>

/// Incremented by the handler on every fault it absorbs: a reader checks it per record (a plain load).
extern volatile int bleanalyze_fileguard_faults;

/// Registers [base, base+size) (installs the SIGBUS handler on first use). Returns 0, or -1 when the
/// table is full (the region is then unguarded).
int bleanalyze_fileguard_register(const void *base, size_t size);
void bleanalyze_fileguard_unregister(const void *base);
/// The lowest offset into the region whose page faulted, or (size_t)-1 when none did.
size_t bleanalyze_fileguard_fault_offset(const void *base);

static inline int bleanalyze_fileguard_fault_count(void) { return bleanalyze_fileguard_faults; }
#endif
