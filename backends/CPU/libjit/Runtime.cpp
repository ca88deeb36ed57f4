//===- Runtime.cpp - The threaded entry's runtime, compiled to bitcode ----===//
//
// NAME_mt(..., numThreads) calls ember_team_run once: it runs the network's
// schedule (a generated function that calls every kernel on its share and
// waits for a kernel to be complete before the kernels that depend on it)
// on numThreads - 1 workers and on the calling thread, and returns when
// all are done.
//
// A kernel is complete when all of its iterations are done, whoever did
// them: threads take chunks of each other's shares, and a thread that
// arrives late (a worker whose core was idle takes microseconds to wake on
// a virtual machine, sometimes milliseconds) finds the kernels it
// missed complete and skips them, instead of holding the team at a barrier
// that every thread must reach.
//
// The workers belong to the network (one pool per compiled network) and
// outlive the call: created on the first threaded call (more when a later
// call asks for more), they block on a condition variable between calls --
// no spinning after return -- and NAME_threads_release() (also run when a
// shared bundle is unloaded) ends them. Workers created afresh for every
// call pay a thread creation each and may be placed on the caller's core,
// where they share it instead of running beside it
// (docs/PerformanceHistory.md#thread-pool). A call that finds the pool in use
// by another thread creates its own workers as before.
//
// Waiting for a kernel spins for up to a few milliseconds (kernels are often
// shorter than a wake-up), then blocks on a condition variable, so a waiting
// thread does not burn a core while another one finishes a long kernel.
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
__attribute__((weak)) int pthread_cond_signal(void *);
__attribute__((weak)) int pthread_once(int *, void (*)());
__attribute__((weak)) int sched_yield();
__attribute__((weak)) int getpid();
}

namespace {
/// The most threads one call uses.
constexpr int64_t kMaxThreads = 256;
/// A wait polls with one pause instruction each (~10-140 cycles depending
/// on the core) before a waiting thread starts yielding.
constexpr int kSpinPolls = 2000;
/// Then polls after a sched_yield each (about a microsecond when nothing
/// else wants the core), so up to a few milliseconds, before it blocks.
/// Blocking costs a futex wake-up (tens of microseconds) per wait, more
/// than many kernels take, so a short spin with no yields blocked too
/// often. Yielding rather than pausing matters when the cores are
/// oversubscribed: a spinning thread would hold the core that the thread
/// it waits for needs, for its whole time slice. Measurements:
/// docs/PerformanceHistory.md#thread-pool. The spin only lasts while the call
/// runs.
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

/// Share cursors and the team's progress hold the number of the kernel
/// they count for (its index in the schedule plus one) above kCountBits
/// bits of count, so they need no reset between kernels: a value of an
/// earlier kernel counts as zero for this one, a value of a later kernel
/// means this one is complete.
constexpr int kCountBits = 40;
constexpr uint64_t kCountMask = (uint64_t(1) << kCountBits) - 1;

/// Chunks of one thread's share already taken (iterations, tagged with the
/// kernel), on a cache line of its own.
struct alignas(64) Cursor {
  uint64_t taken;
};

/// One call's threads. Counters that threads write sit on their own cache
/// lines.
struct Team {
  /// Iterations of the running kernel that are done, tagged with it.
  alignas(64) uint64_t progress;
  alignas(64) uint32_t generation; ///< Bumped once: the start signal.
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
  /// Per thread share of the running kernel (ember_team_for).
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
/// Polls \p done with pause instructions (kSpinPolls), then after a
/// sched_yield each (kYieldPolls, when sched_yield exists); true as soon as
/// it holds, false when the caller should block.
template <class F> bool pollFor(F done) {
  for (int i = 0; i < kSpinPolls; ++i) {
    if (done())
      return true;
    cpuRelax();
  }
  for (int i = 0; sched_yield && i < kYieldPolls; ++i) {
    if (done())
      return true;
    sched_yield();
  }
  return done();
}

/// Waits until \p done() holds: polls (pollFor), then blocks on the team's
/// condition variable (the thread that makes it hold wakes the sleepers:
/// wakeSleepers). \p done must read with sequentially consistent loads,
/// which pair with that thread's store and its load of the sleeper count:
/// either it sees us sleeping, or we see the condition hold.
template <class F> void waitUntil(Team *t, F done) {
  if (pollFor(done))
    return;
  if (!t->canBlock) {
    while (!done())
      cpuRelax();
    return;
  }
  pthread_mutex_lock(t->mutex);
  __atomic_fetch_add(&t->sleepers, 1, __ATOMIC_SEQ_CST);
  while (!done())
    pthread_cond_wait(t->cond, t->mutex);
  __atomic_fetch_sub(&t->sleepers, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(t->mutex);
}

/// Wakes the threads blocked in waitUntil (after a sequentially consistent
/// store that may make their condition hold).
void wakeSleepers(Team *t) {
  if (t->canBlock && __atomic_load_n(&t->sleepers, __ATOMIC_SEQ_CST)) {
    pthread_mutex_lock(t->mutex);
    pthread_cond_broadcast(t->cond);
    pthread_mutex_unlock(t->mutex);
  }
}

/// Waits for the start signal (the generation past \p gen).
void waitForGeneration(Team *t, uint32_t gen) {
  waitUntil(t, [&] {
    return __atomic_load_n(&t->generation, __ATOMIC_SEQ_CST) != gen;
  });
}

/// Gives the start signal.
void releaseGeneration(Team *t) {
  __atomic_fetch_add(&t->generation, 1, __ATOMIC_SEQ_CST);
  wakeSleepers(t);
}

/// True when kernel \p idx (\p ext iterations) is complete.
bool kernelComplete(Team *t, int64_t idx, int64_t ext) {
  uint64_t v = __atomic_load_n(&t->progress, __ATOMIC_SEQ_CST);
  uint64_t k = v >> kCountBits, want = uint64_t(idx) + 1;
  return ext <= 0 || k > want ||
         (k == want && (v & kCountMask) >= uint64_t(ext));
}

/// Counts \p n more iterations of kernel \p idx done (the team's progress
/// still holds an earlier kernel when these are its first), publishing the
/// writes made for them; wakes the waiting threads when the kernel is
/// complete.
void markDone(Team *t, int64_t idx, int64_t n, int64_t ext) {
  uint64_t tag = (uint64_t(idx) + 1) << kCountBits;
  uint64_t v = __atomic_load_n(&t->progress, __ATOMIC_RELAXED), nv;
  do
    nv = ((v & ~kCountMask) == tag ? v : tag) + uint64_t(n);
  while (!__atomic_compare_exchange_n(&t->progress, &v, nv, /*weak=*/false,
                                      __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
  if ((nv & kCountMask) >= uint64_t(ext))
    wakeSleepers(t);
}

void *runWorker(void *p) {
  Worker *w = (Worker *)p;
  Team *t = w->team;
  waitForGeneration(t, 0); // the start signal: the team's size is final
  t->schedule(t, t->c, t->m, t->a, w->tid, t->size);
  return nullptr;
}

/// A pool worker's start: its thread id and the last call it has seen.
struct PoolArg {
  int64_t tid;
  uint64_t seen;
};

/// The network's persistent workers (see the file comment). Everything
/// below `busy` belongs to the thread that set busy, except the fields
/// marked "under mutex", which the workers read.
struct Pool {
  int32_t busy;  ///< 1 while one call (or the release) holds the pool.
  int32_t state; ///< Locks: 0: not made, 1: made, 2: failed (unusable).
  alignas(16) unsigned char mutex[128];
  alignas(16) unsigned char wake[128]; ///< Workers wait here for a call.
  alignas(16) unsigned char done[128]; ///< The caller waits here for them.
  int64_t started;                     ///< Workers 1 .. started exist.
  int pid; ///< The process that made the locks and workers (a forked child
           ///< has neither).
  uint64_t call;   ///< Under mutex: bumped per call.
  Team *team;      ///< Under mutex: the call's team.
  int64_t size;    ///< Under mutex: its size.
  int64_t pending; ///< Under mutex: workers not done.
  bool quit;       ///< Under mutex: workers exit.
  ember_thread_t threads[kMaxThreads];
  PoolArg args[kMaxThreads];
};
Pool gPool;
/// pthread_once's control for the pool's locks (PTHREAD_ONCE_INIT is 0 in
/// glibc, musl and bionic, so zero-initialized storage is one).
int gPoolOnce;

void *poolWorker(void *p) {
  PoolArg *arg = (PoolArg *)p;
  int64_t tid = arg->tid;
  uint64_t seen = arg->seen;
  Pool &P = gPool;
  for (;;) {
    pthread_mutex_lock(P.mutex);
    while (P.call == seen && !P.quit)
      pthread_cond_wait(P.wake, P.mutex);
    if (P.quit) {
      pthread_mutex_unlock(P.mutex);
      return nullptr;
    }
    seen = P.call;
    // The team lives on the caller's stack: only a worker the caller
    // waits for (tid < size) may touch it.
    Team *t = P.size > tid ? P.team : nullptr;
    pthread_mutex_unlock(P.mutex);
    if (!t)
      continue;
    t->schedule(t, t->c, t->m, t->a, tid, t->size);
    pthread_mutex_lock(P.mutex);
    if (__atomic_sub_fetch(&P.pending, 1, __ATOMIC_RELEASE) == 0)
      pthread_cond_signal(P.done);
    pthread_mutex_unlock(P.mutex);
  }
}

bool poolFunctionsExist() {
  return pthread_create && pthread_join && pthread_mutex_init &&
         pthread_mutex_lock && pthread_mutex_unlock && pthread_cond_init &&
         pthread_cond_wait && pthread_cond_broadcast && pthread_cond_signal &&
         pthread_once;
}

/// Makes the pool's mutex and condition variables for this process.
bool makePoolLocks() {
  Pool &P = gPool;
  P.pid = getpid ? getpid() : 0;
  bool ok = pthread_mutex_init(P.mutex, nullptr) == 0;
  ok = ok && pthread_cond_init(P.wake, nullptr) == 0;
  ok = ok && pthread_cond_init(P.done, nullptr) == 0;
  P.state = ok ? 1 : 2;
  P.started = 0;
  P.call = 0;
  P.quit = false;
  return ok;
}

void makePoolLocksOnce() { makePoolLocks(); }

/// Takes the pool for one call and makes sure it has \p want workers (or
/// as many as could be created); false when another call holds it or it
/// cannot be used.
///
/// The locks are made once per process and kept across
/// NAME_threads_release: made under the busy flag alone, a later caller on
/// another thread would be ordered after them by that flag's atomics only,
/// which a thread sanitizer does not see in the uninstrumented bundle;
/// pthread_once orders the making before every caller in a way it does.
bool poolAcquire(int64_t want) {
  Pool &P = gPool;
  if (!poolFunctionsExist() ||
      __atomic_exchange_n(&P.busy, 1, __ATOMIC_ACQUIRE) != 0)
    return false;
  pthread_once(&gPoolOnce, makePoolLocksOnce);
  // A child forked after the workers started has the pool's memory but
  // not its threads, and its locks may be held by, or have waiters from,
  // threads that do not exist here: make them again and start over.
  if (P.state == 1 && getpid && P.pid != getpid())
    makePoolLocks();
  if (P.state != 1) {
    __atomic_store_n(&P.busy, 0, __ATOMIC_RELEASE);
    return false;
  }
  for (; P.started < want; ++P.started) {
    int64_t tid = P.started + 1;
    P.args[tid] = PoolArg{tid, P.call};
    if (pthread_create(&P.threads[tid], nullptr, poolWorker, &P.args[tid]) != 0)
      break; // run with the workers we have
  }
  return true;
}

/// Runs \p t's schedule on the pool (held by the caller) and on the calling
/// thread; returns when every worker of the call is done.
void poolRun(Team *t, int64_t n) {
  Pool &P = gPool;
  int64_t size = n < P.started + 1 ? n : P.started + 1;
  t->size = size;
  pthread_mutex_lock(P.mutex);
  P.team = t;
  P.size = size;
  P.pending = size - 1;
  ++P.call;
  pthread_cond_broadcast(P.wake);
  pthread_mutex_unlock(P.mutex);
  t->schedule(t, t->c, t->m, t->a, 0, size);
  // The workers finish about when the caller does: poll (the call is still
  // running) before blocking, as waiting for a kernel does; a blocked caller's
  // core can take as long to wake as a whole small network.
  pollFor([&] { return __atomic_load_n(&P.pending, __ATOMIC_ACQUIRE) == 0; });
  pthread_mutex_lock(P.mutex);
  while (P.pending > 0)
    pthread_cond_wait(P.done, P.mutex);
  pthread_mutex_unlock(P.mutex);
  __atomic_store_n(&P.busy, 0, __ATOMIC_RELEASE);
}
} // namespace

/// Ends the pool's workers (waiting for a call that holds it to finish);
/// the next threaded call creates new ones. NAME_threads_release() calls
/// it, and so does unloading a shared bundle.
extern "C" __attribute__((used)) void ember_pool_release() {
  Pool &P = gPool;
  while (__atomic_exchange_n(&P.busy, 1, __ATOMIC_ACQUIRE) != 0)
    if (sched_yield)
      sched_yield();
  // A forked child has no workers to end (the ids are its parent's).
  bool own = P.state == 1 && (!getpid || P.pid == getpid());
  if (own && P.started > 0) {
    pthread_mutex_lock(P.mutex);
    P.quit = true;
    pthread_cond_broadcast(P.wake);
    pthread_mutex_unlock(P.mutex);
    for (int64_t i = 1; i <= P.started; ++i)
      pthread_join(P.threads[i], nullptr);
    // The locks stay for the next call (see poolAcquire).
    P.quit = false;
  }
  P.started = 0;
  __atomic_store_n(&P.busy, 0, __ATOMIC_RELEASE);
}

/// A shared bundle's workers run its code: end them when it is unloaded.
__attribute__((destructor)) static void releasePoolAtUnload() {
  ember_pool_release();
}

/// Returns when kernel \p idx (\p ext iterations) is complete; the writes
/// made for it by any thread are then visible to the caller.
extern "C" __attribute__((used)) void ember_team_wait(Team *t, int64_t idx,
                                                      int64_t ext) {
  if (t->size > 1)
    waitUntil(t, [&] { return kernelComplete(t, idx, ext); });
}

/// Runs thread \p tid's part of kernel \p idx, of \p ext parallel
/// iterations: its static share first (thread i owns [ext * i / n, ext * (i
/// + 1) / n), so consecutive kernels touch the same data on the same thread
/// when the team keeps pace), in chunks, then whatever chunks of the other
/// shares are left. A thread that starts late or a share that is slower
/// thus does not hold up the team. The caller waits for the kernel
/// (ember_team_wait) before a kernel that depends on it.
extern "C" __attribute__((used)) void
ember_team_for(Team *t, int64_t tid, KernelFn fn, int64_t ext, int64_t idx) {
  int64_t n = t->size;
  if (n <= 1) {
    fn(t->c, t->m, t->a, 0, ext);
    return;
  }
  uint64_t want = uint64_t(idx) + 1;
  for (int64_t k = 0; k < n; ++k) {
    int64_t o = tid + k < n ? tid + k : tid + k - n;
    int64_t lo = ext * o / n, len = ext * (o + 1) / n - lo;
    int64_t chunk = (len + kChunksPerShare - 1) / kChunksPerShare;
    if (len <= 0)
      continue;
    uint64_t *cursor = &t->cursors[o].taken;
    uint64_t v = __atomic_load_n(cursor, __ATOMIC_RELAXED);
    for (;;) {
      // A later kernel's tag: this one is complete, its chunks all taken.
      uint64_t tag = v >> kCountBits;
      if (tag > want)
        break;
      int64_t s = tag == want ? int64_t(v & kCountMask) : 0;
      if (s >= len)
        break;
      int64_t e = s + chunk < len ? s + chunk : len;
      if (!__atomic_compare_exchange_n(
              cursor, &v, (want << kCountBits) + uint64_t(e),
              /*weak=*/false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        continue; // v now holds the cursor's value
      fn(t->c, t->m, t->a, lo + s, lo + e);
      markDone(t, idx, e - s, ext);
      v = __atomic_load_n(cursor, __ATOMIC_RELAXED);
    }
  }
}

/// Runs sequential kernel \p idx (\p ext iterations) on thread 0 and marks
/// it complete; the other threads go on to wait for it where needed.
extern "C" __attribute__((used)) void
ember_team_seq(Team *t, int64_t tid, KernelFn fn, int64_t ext, int64_t idx) {
  if (tid != 0)
    return;
  fn(t->c, t->m, t->a, 0, ext);
  if (t->size > 1 && ext > 0)
    markDone(t, idx, ext, ext);
}

/// Calls the team's profiling hook with \p i on thread 0 (the profiling
/// schedule calls it once each kernel is complete, so the time between two
/// calls is a kernel's wall time on the team, waiting included).
extern "C" __attribute__((used)) void ember_team_tick(Team *t, int64_t tid,
                                                      int64_t i) {
  if (tid == 0 && t->hook)
    t->hook(t->hookCtx, i);
}

static void runWithNewThreads(Team *t, int64_t n);

/// Runs \p schedule on min(numThreads, 256) threads (the caller is thread 0)
/// and returns when all have finished; \p hook (may be null) is called by
/// ember_team_tick.
extern "C" __attribute__((used)) void
ember_team_run(ScheduleFn schedule, uint8_t *c, uint8_t *m, uint8_t *a,
               int64_t numThreads, HookFn hook, void *hookCtx) {
  Team team;
  team.hook = hook;
  team.hookCtx = hookCtx;
  team.progress = 0;
  team.generation = team.sleepers = 0;
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
  if (poolAcquire(n - 1)) {
    poolRun(&team, n);
  } else {
    runWithNewThreads(&team, n);
  }
  if (team.canBlock) {
    if (pthread_cond_destroy)
      pthread_cond_destroy(team.cond);
    if (pthread_mutex_destroy)
      pthread_mutex_destroy(team.mutex);
  }
}

/// The team on \p n threads created for this call and joined before it
/// returns (when another call holds the pool).
static void runWithNewThreads(Team *t, int64_t n) {
  Worker workers[kMaxThreads];
  ember_thread_t threads[kMaxThreads];
  int64_t started = 1;
  for (; started < n; ++started) {
    workers[started] = Worker{t, started};
    if (pthread_create(&threads[started], nullptr, runWorker,
                       &workers[started]) != 0)
      break; // run with the threads we have
  }
  t->size = started;
  releaseGeneration(t); // start
  t->schedule(t, t->c, t->m, t->a, 0, started);
  for (int64_t i = 1; i < started; ++i)
    pthread_join(threads[i], nullptr);
}
