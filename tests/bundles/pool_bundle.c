/*===- pool_bundle.c - The threaded entry's worker pool, from C ----------===*
 *
 * Built with: cc -std=c99 -D_DEFAULT_SOURCE -DNET=name -include DIR/name.h
 *             pool_bundle.c DIR/name.o -lm -lpthread
 * Usage: pool_bundle WEIGHTS INPUT.bin (a bundle with one input, one output)
 *
 * NAME_mt keeps its workers between calls. Checks that its output stays
 * bit-identical to NAME's over many calls in one process: thread counts
 * going up and down, more threads than cores, after NAME_threads_release
 * (and a second release), from two threads handing the pool on with
 * nothing between them that a thread sanitizer sees as synchronization
 * (the pool's own ordering must suffice), from two threads calling NAME_mt
 * at once (one finds the pool taken and creates its own workers), and in a
 * child forked after the workers started (it has the pool's memory but not
 * its threads), which releases them first. Exit 0: all equal.
 *
 *===----------------------------------------------------------------------===*/
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read_file.h"
#include <sys/wait.h>
#include <unistd.h>

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define INFO CAT(NET, _info)
#define ENTRY_MT CAT(NET, _mt)
#define RELEASE CAT(NET, _threads_release)

static const EmberBundleInfo *info = &INFO;
static uint8_t *weights, *input, *expected;

/* One caller's regions. */
struct Caller {
  uint8_t *mut, *act;
  int threads, calls, failures;
};

static uint8_t *region(uint64_t size) {
  uint64_t n = (size + 63) / 64 * 64 + 64;
  void *p = NULL;
  if (posix_memalign(&p, 64, n))
    exit(4);
  memset(p, 0xA5, n);
  return p;
}

static void callerInit(struct Caller *c, int threads, int calls) {
  c->mut = region(info->mutableSize);
  c->act = region(info->activationSize);
  c->threads = threads;
  c->calls = calls;
  c->failures = 0;
}

/* Runs NET_mt (NET when threads is 0) and compares with the expected
 * output; returns 1 on a difference or an error. */
static int runOnce(struct Caller *c, int threads) {
  const EmberTensorInfo *in = &info->inputs[0], *out = &info->outputs[0];
  memcpy(c->mut + in->offset, input, in->sizeInBytes);
  memset(c->mut + out->offset, 0xA5, out->sizeInBytes);
  int rc = threads ? ENTRY_MT(weights, c->mut, c->act, threads)
                   : NET(weights, c->mut, c->act);
  if (rc)
    return 1;
  if (expected && memcmp(expected, c->mut + out->offset, out->sizeInBytes))
    return 1;
  return 0;
}

static void *callerMain(void *p) {
  struct Caller *c = p;
  for (int i = 0; i < c->calls; ++i)
    c->failures += runOnce(c, c->threads);
  return NULL;
}

/* The first caller after a release hands the pool on to the second by a
 * relaxed flag: under TSan, whatever orders the second caller's use of the
 * pool's locks after their making must come from the pool itself. */
static int handedOn;

static void *firstCaller(void *p) {
  struct Caller *c = p;
  c->failures += runOnce(c, 2);
  __atomic_store_n(&handedOn, 1, __ATOMIC_RELAXED);
  return NULL;
}

static void *secondCaller(void *p) {
  struct Caller *c = p;
  while (!__atomic_load_n(&handedOn, __ATOMIC_RELAXED))
    sched_yield();
  c->failures += runOnce(c, 3);
  return NULL;
}

#define CHECK(cond, what)                                                      \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "FAIL: %s\n", what);                                     \
      ++fails;                                                                 \
    }                                                                          \
  } while (0)

int main(int argc, char **argv) {
  if (argc != 3 || info->numInputs != 1 || info->numOutputs != 1)
    return 2;
  int fails = 0;
  weights = region(info->constantSize);
  input = region(info->inputs[0].sizeInBytes);
  if (readFile(argv[1], weights, info->constantSize) ||
      readFile(argv[2], input, info->inputs[0].sizeInBytes))
    return 3;
  struct Caller a, b;
  callerInit(&a, 2, 20);
  callerInit(&b, 3, 20);
  CHECK(!runOnce(&a, 0), "NAME");
  expected = region(info->outputs[0].sizeInBytes);
  memcpy(expected, a.mut + info->outputs[0].offset,
         info->outputs[0].sizeInBytes);

  static const int counts[] = {2, 2, 4, 1, 3, 2, 8, 2};
  for (unsigned i = 0; i < sizeof counts / sizeof counts[0]; ++i)
    CHECK(!runOnce(&a, counts[i]), "NAME_mt with changing thread counts");
  /* More threads than this machine's cores: some start late or lose their
   * core mid-call and find kernels that the others completed without them
   * (their chunks all taken), which they must skip. */
  for (int i = 0; i < 30; ++i)
    CHECK(!runOnce(&a, 6), "NAME_mt with more threads than cores");
  RELEASE();
  RELEASE();
  pthread_t ta, tb;
  pthread_create(&ta, NULL, firstCaller, &a);
  pthread_create(&tb, NULL, secondCaller, &b);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  CHECK(a.failures == 0 && b.failures == 0,
        "NAME_mt after NAME_threads_release, handed from thread to thread");
  CHECK(!runOnce(&a, 2), "NAME_mt after NAME_threads_release");

  pthread_create(&ta, NULL, callerMain, &a);
  pthread_create(&tb, NULL, callerMain, &b);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  CHECK(a.failures == 0 && b.failures == 0, "two callers at once");

  pid_t child = fork();
  /* The child's first call is a release: the workers it would end are its
   * parent's, which it must not wait for. */
  if (child == 0) {
    RELEASE();
    _exit(runOnce(&a, 2) || runOnce(&a, 3));
  }
  int status = 0;
  CHECK(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
            WEXITSTATUS(status) == 0,
        "NAME_mt in a forked child");
  CHECK(!runOnce(&a, 2), "NAME_mt in the parent after the fork");
  RELEASE();
  if (!fails)
    printf("ok: NAME_mt's pool: thread counts, release, two callers, fork\n");
  return fails ? 1 : 0;
}
