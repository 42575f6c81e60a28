/*
 * failmalloc.c - an LD_PRELOAD library that runs a program out of memory, for
 * tests/cli_oom.sh: once FAILMALLOC_AFTER=N allocations (malloc, calloc,
 * realloc) have succeeded, every later one fails with ENOMEM, as when memory
 * stays exhausted.  FAILMALLOC_MIN=B: only requests of at least B bytes
 * count and fail (the large arrays, not stdio's small buffers).  Unset: no
 * failure.  FAILMALLOC_ONCE=1: only the (N+1)th fails, the rest succeed (a
 * transient shortage, which must not give a different result with exit 0).
 * FAILMALLOC_COUNT=FILE: at exit, write how many allocations were
 * counted to FILE (a test's first pass, to choose where to fail).  glibc
 * routes its own calls (strdup, stdio) through these too.
 * Not for sanitizer builds: ASan replaces malloc itself.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

static atomic_long budget = -2;	/* allocations left; -1 unlimited, -2 not read yet, -3 failed once */
static size_t min_bytes;
static int once;
static atomic_long counted;

/* Does a request of N bytes fail?  Counts it if it is counted. */
static int fails(size_t n)
{
	long left = atomic_load(&budget);

	if (left == -2) {
		const char *after = getenv("FAILMALLOC_AFTER"), *min = getenv("FAILMALLOC_MIN");

		min_bytes = min ? strtoul(min, NULL, 10) : 0;
		once = getenv("FAILMALLOC_ONCE") != NULL;
		left = after ? atol(after) : -1;
		atomic_store(&budget, left);
	}
	if (n < min_bytes)
		return 0;
	atomic_fetch_add(&counted, 1);
	while (left > 0 && !atomic_compare_exchange_weak(&budget, &left, left - 1))
		;
	/* left > 0: this one was in the budget; < 0: unlimited, or failed once already */
	if (left != 0)
		return 0;
	/* once: only the first allocation past the budget fails */
	if (once && !atomic_compare_exchange_strong(&budget, &left, -3))
		return 0;
	errno = ENOMEM;
	return 1;
}

void *malloc(size_t n)
{
	return fails(n) ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	return fails(n * size) ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	return fails(n) ? NULL : __libc_realloc(p, n);
}

__attribute__((destructor)) static void report_count(void)
{
	const char *path = getenv("FAILMALLOC_COUNT");
	FILE *f = path ? fopen(path, "w") : NULL;

	if (f) {
		fprintf(f, "%ld\n", atomic_load(&counted));
		fclose(f);
	}
}
