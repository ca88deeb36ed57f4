//===- Runtime.cpp - The threaded entry's runtime, compiled to bitcode ----===//
//
// NAME_mt(..., numThreads) calls ember_team_run once: it creates
// numThreads - 1 workers, runs the network's schedule (a generated function
// that calls every kernel on its static slice and meets the team at a
// barrier between dependent kernels) on all of them and on the calling
// thread, and joins the workers before returning. No thread, pool or lock
// survives the call.
//
// The barrier spins for up to a few milliseconds (kernels are often shorter
// than a wake-up), then blocks on a condition variable, so a waiting thread
// does not burn a core while another one finishes a long kernel.
//
// pthread symbols are weak: a program that only calls the single-threaded
// entry links no thread library; without them everything runs on the
// calling thread. Mutexes and condition variables are opaque storage
// initialized by pthread_*_init, so no libc header is needed here.
//
//===----------------------------------------------------------------------===//
#include <stdint.h>

typedef unsigned long ember_thread_t; // pthread_t on Linux (x86_64, aarch64)
extern "C" {
__attribute__((weak)) int pthread_create(ember_thread_t *, const void *,
                                         void *(*)(void *), void *);
__attribute__((weak)) int pthread_join(ember_thread_t, void **);
__attribute__((weak)) int pthread_mutex_init(void *, const void *);
__attribute__((weak)) int pthread_mutex_destroy(void *);
__attribute__((weak)) int pthread_mutex_lock(void *);
__attribute__((weak)) int pthread_mutex_unlock(void *);
__attribute__((weak)) int pthread_cond_init(void *, const void *);
__attribute__((weak)) int pthread_cond_destroy(void *);
__attribute__((weak)) int pthread_cond_wait(void *, void *);
__attribute__((weak)) int pthread_cond_broadcast(void *);
__attribute__((weak)) int sched_yield();
}

namespace {
/// The most threads one call uses.
constexpr int64_t kMaxThreads = 256;
/// Barrier polls with one pause instruction each (~10-140 cycles depending
/// on the core) before a waiting thread starts yielding.
constexpr int kSpinPolls = 2000;
/// Then polls after a sched_yield each (about a microsecond when nothing
/// else wants the core), so up to a few milliseconds, before it blocks.
/// Blocking costs a futex wake-up (tens of microseconds) per barrier; with a
/// short spin and no yields (1000 polls) shufflenet_v2 at 2 threads took
/// 5.5 ms instead of 3.8 ms. Yielding rather than pausing matters when the
/// cores are oversubscribed: a spinning thread would hold the core that the
/// thread it waits for needs, for its whole time slice (mobilenet_v2 at 2
/// threads on a loaded 2-core machine: 100 ms with pause-only spinning).
/// The spin only lasts while the call runs.
constexpr int kYieldPolls = 3000;

struct Team;
/// A kernel: runs iterations [lo, hi) of its parallel loop.
typedef void (*KernelFn)(uint8_t *, uint8_t *, uint8_t *, int64_t, int64_t);
/// A thread's static share of a kernel is taken in this many chunks, so
/// that a thread that is done can take chunks of a late thread's share.
constexpr int64_t kChunksPerShare = 4;
/// A profiling timer hook: hook(ctx, i) before kernel i, hook(ctx, count)
/// after the last one.
typedef void (*HookFn)(void *, int64_t);
/// The generated schedule: runs thread \p tid's share of every kernel.
typedef void (*ScheduleFn)(Team *, uint8_t *, uint8_t *, uint8_t *, int64_t,
                           int64_t);

/// Chunks of one thread's share already taken, on a cache line of its own.
struct alignas(64) Cursor {
  int64_t taken;
};

/// One call's threads. Counters that threads write sit on their own cache
/// lines.
struct Team {
  alignas(64) uint32_t arrived;
  alignas(64) uint32_t generation;
  alignas(64) uint32_t sleepers;
  int64_t size;
  bool canBlock;
  ScheduleFn schedule;
  uint8_t *c, *m, *a;
  HookFn hook; ///< Null but in the profiling entry.
  void *hookCtx;
  // Opaque pthread_mutex_t / pthread_cond_t (larger than any libc's).
  alignas(16) unsigned char mutex[128];
  alignas(16) unsigned char cond[128];
  /// Per thread share of the running kernel (ember_team_for), zeroed by the
  /// barrier that ends each kernel.
  Cursor cursors[kMaxThreads];
};

struct Worker {
  Team *team;
  int64_t tid;
};

inline void cpuRelax() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __builtin_arm_yield();
#endif
}

/// Waits until the team's generation is no longer \p gen.
void waitForGeneration(Team *t, uint32_t gen) {
  for (int i = 0; i < kSpinPolls; ++i) {
    if (__atomic_load_n(&t->generation, __ATOMIC_ACQUIRE) != gen)
      return;
    cpuRelax();
  }
  for (int i = 0; sched_yield && i < kYieldPolls; ++i) {
    if (__atomic_load_n(&t->generation, __ATOMIC_ACQUIRE) != gen)
      return;
    sched_yield();
  }
  if (!t->canBlock) {
    while (__atomic_load_n(&t->generation, __ATOMIC_ACQUIRE) == gen)
      cpuRelax();
    return;
  }
  pthread_mutex_lock(t->mutex);
  // Sequentially consistent with the releaser's generation increment and
  // sleepers load: either it sees us sleeping, or we see the new generation.
  __atomic_fetch_add(&t->sleepers, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(&t->generation, __ATOMIC_SEQ_CST) == gen)
    pthread_cond_wait(t->cond, t->mutex);
  __atomic_fetch_sub(&t->sleepers, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(t->mutex);
}

/// Starts the next generation and wakes the threads that blocked.
void releaseGeneration(Team *t) {
  __atomic_fetch_add(&t->generation, 1, __ATOMIC_SEQ_CST);
  if (t->canBlock && __atomic_load_n(&t->sleepers, __ATOMIC_SEQ_CST)) {
    pthread_mutex_lock(t->mutex);
    pthread_cond_broadcast(t->cond);
    pthread_mutex_unlock(t->mutex);
  }
}

void *runWorker(void *p) {
  Worker *w = (Worker *)p;
  Team *t = w->team;
  waitForGeneration(t, 0); // the start signal: the team's size is final
  t->schedule(t, t->c, t->m, t->a, w->tid, t->size);
  return nullptr;
}
} // namespace

/// Blocks until every thread of \p t has arrived; the writes made before
/// the barrier by any thread are visible after it to all of them.
extern "C" __attribute__((used)) void ember_team_barrier(Team *t) {
  if (t->size <= 1)
    return;
  uint32_t gen = __atomic_load_n(&t->generation, __ATOMIC_ACQUIRE);
  if (__atomic_fetch_add(&t->arrived, 1, __ATOMIC_ACQ_REL) + 1 ==
      uint32_t(t->size)) {
    __atomic_store_n(&t->arrived, 0, __ATOMIC_RELAXED);
    // Every thread is done with the kernel's shares: reset them for the
    // next one (released with the generation).
    for (int64_t i = 0; i < t->size; ++i)
      __atomic_store_n(&t->cursors[i].taken, 0, __ATOMIC_RELAXED);
    releaseGeneration(t);
    return;
  }
  waitForGeneration(t, gen);
}

/// Runs thread \p tid's part of a kernel of \p ext parallel iterations:
/// its static share first (thread i owns [ext * i / n, ext * (i + 1) / n),
/// so consecutive kernels touch the same data on the same thread when the
/// team keeps pace), in chunks, then whatever chunks of the other shares are
/// left. A thread that starts late (a worker still being created at the
/// first kernel) or a share that is slower thus no longer holds up the
/// team at the barrier. The caller meets the barrier after it.
extern "C" __attribute__((used)) void ember_team_for(Team *t, int64_t tid,
                                                     KernelFn fn, int64_t ext) {
  int64_t n = t->size;
  if (n <= 1) {
    fn(t->c, t->m, t->a, 0, ext);
    return;
  }
  for (int64_t k = 0; k < n; ++k) {
    int64_t o = tid + k < n ? tid + k : tid + k - n;
    int64_t lo = ext * o / n, len = ext * (o + 1) / n - lo;
    int64_t chunk = (len + kChunksPerShare - 1) / kChunksPerShare;
    if (len <= 0)
      continue;
    for (;;) {
      int64_t s =
          __atomic_fetch_add(&t->cursors[o].taken, chunk, __ATOMIC_RELAXED);
      if (s >= len)
        break;
      int64_t e = s + chunk < len ? s + chunk : len;
      fn(t->c, t->m, t->a, lo + s, lo + e);
    }
  }
}

/// Calls the team's profiling hook with \p i on thread 0 (the profiling
/// schedule calls it after each barrier, so the time between two calls is
/// a kernel's wall time on the team, waiting included).
extern "C" __attribute__((used)) void ember_team_tick(Team *t, int64_t tid,
                                                      int64_t i) {
  if (tid == 0 && t->hook)
    t->hook(t->hookCtx, i);
}

/// Runs \p schedule on min(numThreads, 256) threads (the caller is thread 0)
/// and returns when all have finished; \p hook (may be null) is called by
/// ember_team_tick.
extern "C" __attribute__((used)) void
ember_team_run(ScheduleFn schedule, uint8_t *c, uint8_t *m, uint8_t *a,
               int64_t numThreads, HookFn hook, void *hookCtx) {
  Team team;
  team.hook = hook;
  team.hookCtx = hookCtx;
  team.arrived = team.generation = team.sleepers = 0;
  for (int64_t i = 0; i < kMaxThreads; ++i)
    team.cursors[i].taken = 0;
  team.schedule = schedule;
  team.c = c;
  team.m = m;
  team.a = a;
  int64_t n = numThreads < kMaxThreads ? numThreads : kMaxThreads;
  if (n <= 1 || !pthread_create || !pthread_join) {
    team.size = 1;
    schedule(&team, c, m, a, 0, 1);
    return;
  }
  team.canBlock = pthread_mutex_init && pthread_cond_init &&
                  pthread_mutex_lock && pthread_mutex_unlock &&
                  pthread_cond_wait && pthread_cond_broadcast &&
                  pthread_mutex_init(team.mutex, nullptr) == 0;
  if (team.canBlock && pthread_cond_init(team.cond, nullptr) != 0) {
    if (pthread_mutex_destroy)
      pthread_mutex_destroy(team.mutex);
    team.canBlock = false;
  }
  Worker workers[kMaxThreads];
  ember_thread_t threads[kMaxThreads];
  int64_t started = 1;
  for (; started < n; ++started) {
    workers[started] = Worker{&team, started};
    if (pthread_create(&threads[started], nullptr, runWorker,
                       &workers[started]) != 0)
      break; // run with the threads we have
  }
  team.size = started;
  releaseGeneration(&team); // start
  schedule(&team, c, m, a, 0, started);
  for (int64_t i = 1; i < started; ++i)
    pthread_join(threads[i], nullptr);
  if (team.canBlock) {
    if (pthread_cond_destroy)
      pthread_cond_destroy(team.cond);
    if (pthread_mutex_destroy)
      pthread_mutex_destroy(team.mutex);
  }
}
