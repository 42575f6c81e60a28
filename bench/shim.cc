// shim.cc - registers the C benchmarks of bench/*.c with Google Benchmark.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench.h"

struct bm_state {
	benchmark::State *s;
	int64_t user;
	bool started;
};

extern "C" {

bool bm_keep_running(struct bm_state *st)
{
	// KeepRunning() starts the timer on its first call and stops it on
	// its last; the iterations here are heavy, so its cost is noise.
	st->started = true;
	return st->s->KeepRunning();
}

int64_t bm_iterations(struct bm_state *st) { return (int64_t)st->s->iterations(); }
int64_t bm_range(struct bm_state *st, int i) { return st->s->range((std::size_t)i); }
void bm_set_items(struct bm_state *st, int64_t n) { st->s->SetItemsProcessed(n); }

void bm_counter(struct bm_state *st, const char *name, double value)
{
	st->s->counters[name] = benchmark::Counter(value);
}

void bm_counter_rate(struct bm_state *st, const char *name, double total)
{
	st->s->counters[name] = benchmark::Counter(total, benchmark::Counter::kIsRate);
}

void bm_skip(struct bm_state *st, const char *msg) { st->s->SkipWithError(msg); }
void bm_pause(struct bm_state *st) { st->s->PauseTiming(); }
void bm_resume(struct bm_state *st) { st->s->ResumeTiming(); }

bool bm_full(void)
{
	const char *v = std::getenv("DLSIM_BENCH_FULL");
	return v && std::strcmp(v, "1") == 0;
}

int64_t bm_user(struct bm_state *st) { return st->user; }

static benchmark::internal::Benchmark *register_one(const char *name, bm_fn fn, int64_t user,
						     const int64_t *args, int nargs, char unit)
{
	auto *b = benchmark::RegisterBenchmark(name, [fn, user](benchmark::State &s) {
		struct bm_state st{&s, user, false};
		fn(&st);
		if (!st.started && !s.error_occurred())
			while (s.KeepRunning()) {
			}
	});
	if (nargs > 0)
		b->Args(std::vector<int64_t>(args, args + nargs));
	switch (unit) {
	case 'n': b->Unit(benchmark::kNanosecond); break;
	case 'u': b->Unit(benchmark::kMicrosecond); break;
	case 's': b->Unit(benchmark::kSecond); break;
	default: b->Unit(benchmark::kMillisecond); break;
	}
	return b;
}

void bm_register(const char *name, bm_fn fn, int64_t user, const int64_t *args, int nargs,
		 char unit)
{
	register_one(name, fn, user, args, nargs, unit);
}

void bm_register_real_time(const char *name, bm_fn fn, int64_t user, const int64_t *args,
			   int nargs, char unit)
{
	register_one(name, fn, user, args, nargs, unit)->UseRealTime();
}

}  // extern "C"

int main(int argc, char **argv)
{
	bm_register_core();
	bm_register_engine();
	bm_register_log();
	bm_register_queue();
	bm_register_threads();
	bm_register_measure();
	benchmark::Initialize(&argc, argv);
	if (benchmark::ReportUnrecognizedArguments(argc, argv))
		return 1;
	benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	return 0;
}
