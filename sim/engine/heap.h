/*
 * heap.h - d-ary min-heaps on arrays, generated per element type.
 *
 * DL_DEFINE_HEAP(name, T, less, D) defines struct name { T *v; size_t n, cap; }
 * and static inline name_push() (0 or -ENOMEM) and name_pop() (n > 0).  LESS
 * must be a strict weak order; the engine's keys carry a unique sequence
 * number, so ties never happen and the order is deterministic.  D is the
 * arity: 2 is the classic binary heap, 4 halves the depth at the price of
 * more comparisons per level (bench/: BM_event_queue measures both).
 */
#ifndef DL_HEAP_H
#define DL_HEAP_H

#include <errno.h>
#include <stdlib.h>

#define DL_DEFINE_HEAP(NAME, T, LESS, D)                                            \
struct NAME { T *v; size_t n, cap; };                                               \
                                                                                    \
static inline int NAME##_push(struct NAME *h, T e)                                  \
{                                                                                   \
	size_t i;                                                                   \
                                                                                    \
	if (h->n == h->cap) {                                                       \
		size_t cap = h->cap ? h->cap * 2 : 1024;                            \
		T *nv = realloc(h->v, cap * sizeof(*nv));                           \
                                                                                    \
		if (!nv)                                                            \
			return -ENOMEM;                                             \
		h->v = nv;                                                          \
		h->cap = cap;                                                       \
	}                                                                           \
	for (i = h->n++; i > 0 && LESS(&e, &h->v[(i - 1) / (D)]); i = (i - 1) / (D)) \
		h->v[i] = h->v[(i - 1) / (D)];                                      \
	h->v[i] = e;                                                                \
	return 0;                                                                   \
}                                                                                   \
                                                                                    \
static inline T NAME##_pop(struct NAME *h)                                          \
{                                                                                   \
	T top = h->v[0], last = h->v[--h->n];                                       \
	size_t i = 0;                                                               \
                                                                                    \
	for (;;) {                                                                  \
		size_t c = (D) * i + 1, m = c, end;                                 \
                                                                                    \
		if (c >= h->n)                                                      \
			break;                                                      \
		end = c + (D) < h->n ? c + (D) : h->n;                              \
		for (size_t k = c + 1; k < end; k++)                                \
			if (LESS(&h->v[k], &h->v[m]))                               \
				m = k;                                              \
		if (!LESS(&h->v[m], &last))                                         \
			break;                                                      \
		h->v[i] = h->v[m];                                                  \
		i = m;                                                              \
	}                                                                           \
	if (h->n)                                                                   \
		h->v[i] = last;                                                     \
	return top;                                                                 \
}                                                                                   \
                                                                                    \
static inline void NAME##_free(struct NAME *h)                                      \
{                                                                                   \
	free(h->v);                                                                 \
	h->v = NULL;                                                                \
	h->n = h->cap = 0;                                                          \
}

#endif
