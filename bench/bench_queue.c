/*
 * bench_queue.c - BM_event_queue/<arity>/<size>: the engine's future-event
 * set (sim/engine/heap.h) in the classic hold model: the queue holds SIZE
 * events; one hold pops the minimum and pushes an event a random delay
 * later, so the size stays constant.  items_per_second = holds/s (one pop
 * and one push each).
 *
 * The element and the order are des.c's own (vcpu.h's struct dl_vcpu_ev:
 * int64 time, uint64 sequence, uint32 task; time, then sequence): /binary/
 * is what the engine uses, /4ary/ the alternative.  Every popped key is
 * checked to be no smaller than the previous one.
 *
 * Sizes: des.c's event set holds one event per busy simulated CPU (K = 8 by
 * default: /16 is that regime); its run queue, with the same layout, holds
 * up to every queued device (kernel-async queues them all up front): the
 * large sizes.
 */
#include <stdbool.h>
#include <stdint.h>

#include "bench/bench.h"
#include "sim/engine/heap.h"
#include "sim/engine/vcpu.h"
#include "sim/scenario/scenario.h"

DL_DEFINE_HEAP(q2, struct dl_vcpu_ev, dl_vcpu_ev_less, 2)
DL_DEFINE_HEAP(q4, struct dl_vcpu_ev, dl_vcpu_ev_less, 4)

/* Holds per bm_keep_running() call, so that the loop's own cost is noise. */
#define HOLDS_PER_ITER 1024
/* Delays are uniform in [0, 2^DELAY_BITS) ns (about 1 ms on average, like
 * the default scenario's PM callbacks); a quarter of them are 0, as a
 * zero-latency phase is in the engine, so ties on time are broken by seq. */
#define DELAY_BITS 21

static inline int64_t delay(uint64_t *x)
{
	*x = dl_mix64(*x);
	return (*x & 3) == 0 ? 0 : (int64_t)(*x >> (64 - DELAY_BITS));
}

/* One body per arity: the heap's functions are static inline per type. */
#define BM_QUEUE_BODY(H)                                                            \
	do {                                                                        \
		struct H h = { 0 };                                                 \
		uint64_t x = 42, seq = 0;                                           \
		struct dl_vcpu_ev last = { INT64_MIN, 0, 0 };                               \
		bool sorted = true;                                                 \
		int64_t n = bm_range(st, 0);                                        \
                                                                                    \
		for (int64_t i = 0; i < n; i++) {                                   \
			struct dl_vcpu_ev e = { delay(&x), seq++, (uint32_t)i };            \
                                                                                    \
			if (H##_push(&h, e)) {                                      \
				bm_skip(st, "out of memory");                       \
				H##_free(&h);                                       \
				return;                                             \
			}                                                           \
		}                                                                   \
		while (bm_keep_running(st))                                         \
			for (int k = 0; k < HOLDS_PER_ITER; k++) {                  \
				struct dl_vcpu_ev e = H##_pop(&h);                          \
                                                                                    \
				sorted &= !dl_vcpu_ev_less(&e, &last);                      \
				last = e;                                           \
				e.t += delay(&x);                                   \
				e.seq = seq++;                                      \
				H##_push(&h, e); /* n unchanged: never reallocates */ \
			}                                                           \
		if (!sorted || (int64_t)h.n != n)                                   \
			bm_skip(st, "heap order violated");                         \
		bm_set_items(st, bm_iterations(st) * HOLDS_PER_ITER);               \
		bm_counter(st, "size", (double)n);                                  \
		H##_free(&h);                                                       \
	} while (0)

static void bm_event_queue_binary(struct bm_state *st) { BM_QUEUE_BODY(q2); }
static void bm_event_queue_4ary(struct bm_state *st) { BM_QUEUE_BODY(q4); }

void bm_register_queue(void)
{
	static const int64_t sizes[] = { 16, 1 << 10, 1 << 16, 1 << 20 };

	for (int i = 0; i < 4; i++) {
		bm_register("BM_event_queue/binary", bm_event_queue_binary, 0, &sizes[i], 1, 'u');
		bm_register("BM_event_queue/4ary", bm_event_queue_4ary, 0, &sizes[i], 1, 'u');
	}
}
