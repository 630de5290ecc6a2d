/* rec_unit_test.c -- unit tests of the buffer (ULEB128, flushing, sink
** errors, background writer, forked children), the address map, the fork
** mark, bounded writes to pipes and sockets, and snapshot temporaries. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recorder/base/buffer.h"
#include "recorder/base/fd_out.h"
#include "recorder/base/fork_mark.h"
#include "recorder/base/out_file.h"
#include "recorder/base/u64_map.h"
#include "recorder/capture/sampler.h"

static int failures;

#define CHECK(cond, what) \
  do { if (!(cond)) { printf("FAIL %s (line %d)\n", what, __LINE__); failures++; } } while (0)

/* Plain loop encoder to compare with. */
static size_t uleb_ref(uint8_t *p, uint64_t v)
{
  size_t n = 0;
  while (v >= 0x80) {
    p[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  p[n++] = (uint8_t)v;
  return n;
}

static void test_uleb(void)
{
  uint8_t buf[32], ref[16];
  uint64_t x = 0x9e3779b97f4a7c15ull;
  int i, bad = 0;
  for (i = 0; i < 2000000; i++) {
    uint64_t v;
    size_t n;
    uint8_t *end;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    v = i < 128 ? ((uint64_t)1 << (i % 64)) - (uint64_t)(i / 64) : x >> (x % 64);
    memset(buf, 0xAA, sizeof(buf));
    end = rec_uleb_put(buf, v);
    n = uleb_ref(ref, v);
    if ((size_t)(end - buf) != n || memcmp(buf, ref, n)) bad++;
    end = rec_uleb_put_addr(buf, v);  /* also the address fast path */
    if ((size_t)(end - buf) != n || memcmp(buf, ref, n)) bad++;
    v = ((uint64_t)1 << (42 + i % 8)) + (x >> (22 + i % 8)) - (uint64_t)(i % 3);
    end = rec_uleb_put_addr(buf, v);  /* around 2^42 .. 2^49 */
    n = uleb_ref(ref, v);
    if ((size_t)(end - buf) != n || memcmp(buf, ref, n)) bad++;
  }
  CHECK(bad == 0, "ULEB128 encoding equals the reference loop");
  CHECK(rec_uleb_put(buf, ~(uint64_t)0) - buf == 10, "2^64-1 takes 10 bytes");
  CHECK(buf[9] == 0x01, "last byte of 2^64-1");
}

typedef struct Sink {
  uint8_t *data;
  size_t len;
  int calls;
  int fail_at;  /* call number that fails, 0 = never */
} Sink;

static int sink_write(void *ud, const void *d, size_t n)
{
  Sink *s = ud;
  if (s->fail_at && s->calls + 1 == s->fail_at) return ENOSPC;
  s->calls++;
  s->data = realloc(s->data, s->len + n);
  memcpy(s->data + s->len, d, n);
  s->len += n;
  return 0;
}

static void fill(RecBuf *b, int n)
{
  int i;
  for (i = 0; i < n; i++) {
    rec_buf_need(b, REC_EVENT_MAX);
    rec_buf_byte(b, (uint8_t)i);
  }
}

static void test_buf(int async)
{
  RecBuf b;
  Sink s = {NULL, 0, 0, 0}, f = {NULL, 0, 0, 2};
  int i, ok = 1;
  CHECK(rec_buf_init(&b, 4096, sink_write, &s) == 0, "init");
  if (async) CHECK(rec_buf_async(&b) == 0, "async");
  fill(&b, 100000);
  rec_buf_str(&b, "hello", 5);
  CHECK(rec_buf_sync(&b) == 0, "no error");
  CHECK(s.len == 100000 + 6, "all bytes delivered");
  for (i = 0; i < 100000; i++) ok &= s.data[i] == (uint8_t)i;
  CHECK(ok, "bytes in order");
  CHECK(!memcmp(s.data + 100000, "\x05hello", 6), "string with length");
  CHECK(s.calls >= 100000 / 4096, "one call per buffer");
  CHECK(b.written == s.len, "written counter");
  rec_buf_free(&b);
  free(s.data);

  /* Long strings cross buffer boundaries. */
  {
    char big[10000];
    memset(big, 'x', sizeof(big));
    s.data = NULL;
    s.len = 0;
    s.calls = 0;
    rec_buf_init(&b, 4096, sink_write, &s);
    if (async) rec_buf_async(&b);
    rec_buf_str(&b, big, sizeof(big));
    rec_buf_sync(&b);
    CHECK(s.len == 2 + sizeof(big) && s.data[0] == (0x80 | (10000 & 0x7f)), "long string");
    rec_buf_free(&b);
    free(s.data);
  }

  /* A failing sink: the error sticks, later data is dropped. */
  CHECK(rec_buf_init(&b, 4096, sink_write, &f) == 0, "init");
  if (async) rec_buf_async(&b);
  fill(&b, 50000);
  CHECK(rec_buf_sync(&b) == ENOSPC, "sticky ENOSPC");
  CHECK(f.calls == 1, "nothing accepted after the error");
  CHECK(b.written == f.len, "written counts accepted bytes only");
  rec_buf_free(&b);
  free(f.data);
}

static void test_map(void)
{
  RecMap m;
  uint64_t k;
  int ok = 1;
  rec_map_init(&m);
  CHECK(rec_map_get(&m, 16) == NULL, "empty map");
  for (k = 1; k <= 100000; k++) CHECK(rec_map_put(&m, k * 16, k) == 0, "put");
  for (k = 1; k <= 100000; k++) {
    RecMapEntry *e = rec_map_get(&m, k * 16);
    ok &= e && e->val == k;
  }
  CHECK(ok, "all keys found after growth");
  CHECK(rec_map_get(&m, 8) == NULL, "absent key");
  rec_map_put(&m, 32, 7);
  CHECK(rec_map_get(&m, 32)->val == 7 && m.n == 100000, "overwrite keeps the count");
  rec_map_free(&m);
}

/* Deletion (backward shift) against a plain array model, with keys that
** collide a lot (a small table, many probe runs). */
static void test_map_del(void)
{
  enum { N = 3000 };
  static uint64_t model[N];  /* value + 1, 0 = absent */
  RecMap m;
  uint64_t x = 88172645463325252ull;
  int i, bad = 0;
  rec_map_init(&m);
  for (i = 0; i < 200000; i++) {
    uint64_t k;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    k = x % N;
    if (x & 0x100) {
      rec_map_put(&m, (k + 1) * 16, k * 3);
      model[k] = k * 3 + 1;
    } else {
      int had = rec_map_del(&m, (k + 1) * 16);
      if (had != (model[k] != 0)) bad++;
      model[k] = 0;
    }
  }
  for (i = 0; i < N; i++) {
    RecMapEntry *e = rec_map_get(&m, (uint64_t)(i + 1) * 16);
    if ((e != NULL) != (model[i] != 0) || (e && e->val + 1 != model[i])) bad++;
  }
  CHECK(bad == 0, "map deletion keeps every other entry reachable");
  rec_map_clear(&m);
  CHECK(m.n == 0 && !rec_map_get(&m, 16), "map clear");
  rec_map_free(&m);
}

/* The sampled blocks: the set answers like a reference array, and the
** filter has no false negative and counts exactly below saturation, through
** adds and deletes of spread and of page-aligned addresses (16 slots). */
static void test_sample_set(void)
{
  enum { N = 6000 };
  static uintptr_t keys[N];
  static char in[N];
  static unsigned cnt[REC_SAMPLE_FILTER];
  RecSampler s;
  size_t i, k, bad_has = 0, bad_maybe = 0, bad_cnt = 0, n = 0;
  uint64_t x = 88172645463325252ull;
  memset(&s, 0xff, sizeof(s));  /* as full as the wrapper's static sampler */
  rec_sample_init(&s, 4096, 7, 0);
  for (i = 0; i < REC_SAMPLE_FILTER; i++) CHECK(s.filter[i] == 0, "filter empty after init");
  for (i = 0; i < N; i++)  /* a third 4 KiB-aligned (+16), the rest 16-byte spread */
    keys[i] = i % 3 ? 0x7f0000000000ull + i * 48 : 0x7f8000000010ull + i * 4096;
  for (k = 0; k < 200000; k++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    i = (size_t)(x % N);
    if (in[i]) {
      CHECK(rec_sample_del(&s, (void *)keys[i]) == 1, "delete of a member");
      in[i] = 0, n--, cnt[rec_sample_fslot(keys[i])]--;
    } else {
      CHECK(rec_sample_add(&s, (void *)keys[i]) == 0, "add");
      in[i] = 1, n++, cnt[rec_sample_fslot(keys[i])]++;
    }
    if (k % 997) continue;
    for (i = 0; i < N; i++) {
      bad_has += rec_sample_has(&s, (void *)keys[i]) != in[i];
      bad_maybe += in[i] && !rec_sample_maybe(&s, (void *)keys[i]);
    }
    for (i = 0; i < REC_SAMPLE_FILTER; i++)
      bad_cnt += s.filter[i] != REC_SAMPLE_ALL && s.filter[i] != cnt[i];
  }
  CHECK(bad_has == 0, "rec_sample_has agrees with the reference");
  CHECK(bad_maybe == 0, "no member is filtered out");
  CHECK(bad_cnt == 0, "unsaturated counters count the members of their slot");
  CHECK(s.n == n, "member count");
  for (i = 0; i < 300; i++)  /* 300 blocks 64 KiB apart: one slot */
    rec_sample_add(&s, (void *)(0x7e0000000010ull + i * 65536));
  CHECK(s.filter[rec_sample_fslot(0x7e0000000010ull)] == REC_SAMPLE_ALL, "a slot saturates");
  for (i = 0; i < 300; i++) rec_sample_del(&s, (void *)(0x7e0000000010ull + i * 65536));
  CHECK(s.filter[rec_sample_fslot(0x7e0000000010ull)] == REC_SAMPLE_ALL &&
        s.n == n, "a saturated slot stays so");
  CHECK(rec_sample_del(&s, (void *)0x10) == 0 && !rec_sample_has(&s, (void *)0x10),
        "a non-member is not deleted");
  rec_sample_fill(&s);
  for (i = 0; i < REC_SAMPLE_FILTER; i++) CHECK(s.filter[i] == REC_SAMPLE_ALL, "filled");
  rec_sample_free(&s);
  CHECK(rec_sample_maybe(&s, (void *)0x12340), "after free every address may be sampled");
}

/* One allocation of n bytes as the wrapper counts it: 1 if sampled;
** *stops counts the stops short of a sampled byte. */
static int sample_one(RecSampler *s, int64_t n, size_t *stops)
{
  s->gap -= n;
  if (s->gap > 0) return 0;
  if (s->rest && rec_sample_stop(s)) {
    (*stops)++;
    return 0;
  }
  rec_sample_redraw(s);
  return 1;
}

/* Stops and holds change nothing about which allocations are sampled: the
** same seed with stops (b), with holds at random calls (c: a new thread with
** stacks; b and c with both) and with neither (a) samples the same
** allocations. */
static void test_sample_stops(void)
{
  static RecSampler a, b, c, d;
  size_t i, stops_a = 0, stops_b = 0, stops_c = 0, stops_d = 0, hits = 0, differ = 0, longest = 0,
            holds = 0, held_hits = 0;
  uint64_t x = 0x9e3779b97f4a7c15ull;
  rec_sample_init(&a, 256 << 10, 11, 0);
  rec_sample_init(&b, 256 << 10, 11, 4096);
  rec_sample_init(&c, 256 << 10, 11, 0);
  rec_sample_init(&d, 256 << 10, 11, 4096);
  for (i = 0; i < 2000000; i++) {
    int64_t n;
    int ha, hb, hc, hd, held = 0;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    /* mostly small, now and then up to 64 KiB, rarely 1 MiB */
    n = x % 100 == 0      ? (int64_t)(x >> 20 & 0xffff) + 1
        : x % 100000 == 1 ? 1 << 20
                          : (int64_t)(x >> 40) % 200 + 16;
    if (x % 61 == 7) {  /* the last call made a thread: this one must be seen */
      rec_sample_hold(&c);
      rec_sample_hold(&d);
      holds++;
      held = 1;
    }
    ha = sample_one(&a, n, &stops_a);
    hb = sample_one(&b, n, &stops_b);
    hc = sample_one(&c, n, &stops_c);
    hd = sample_one(&d, n, &stops_d);
    differ += ha != hb || ha != hc || ha != hd;
    hits += ha;
    held_hits += held && hc;
    if (b.gap > (int64_t)longest) longest = (size_t)b.gap;
    if (d.gap > (int64_t)longest) longest = (size_t)d.gap;
  }
  CHECK(differ == 0, "the same allocations sampled with and without stops and holds");
  CHECK(hits > 1000, "allocations were sampled");
  CHECK(stops_a == 0 && stops_b > hits, "stops only where asked, between the samples");
  CHECK(holds > 10000 && stops_c + held_hits == holds, "a held countdown ends at the next allocation");
  CHECK(longest <= 4096, "no countdown longer than a stop");
  rec_sample_hold(&d);  /* a countdown partly in 'rest' */
  rec_sample_fill(&d);
  CHECK(d.gap == REC_SAMPLE_OFF && d.rest == 0, "no sampled recording: the countdown is off");
  for (i = 0; i < 1024; i++) {  /* a TiB allocated with the countdown off */
    d.gap -= 1 << 30;
    if (d.gap > 0) break;
  }
  CHECK(i == 1024, "every allocation ends a countdown that is off");
  rec_sample_free(&a);
  rec_sample_free(&b);
  rec_sample_free(&c);
  rec_sample_free(&d);
}

/* -- Forks ------------------------------------------------------------- */

/* A child by glibc's fork(), by a raw fork system call, and a child sharing
** the memory (clone with CLONE_VM | CLONE_VFORK), each reporting
** rec_forked() through its exit status or the shared memory. */
static pid_t raw_fork(void)
{
#ifdef SYS_fork
  return (pid_t)syscall(SYS_fork);
#else
  return (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
#endif
}

static int child_status(pid_t pid)
{
  int st = -1;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

static volatile uint32_t vm_child_gen = 99;

static int vm_child(void *arg)
{
  (void)arg;
  vm_child_gen = rec_fork_gen();
  return 0;
}

static void test_fork_gen(void)
{
  pid_t pid;
  char *stack = malloc(1 << 16);
  uint32_t g;
  rec_fork_arm();
  g = rec_fork_gen();
  CHECK(rec_fork_gen() == g && rec_fork_gen_cheap() == g, "the same generation where armed");
  if ((pid = fork()) == 0) _exit(rec_fork_gen() == g + 1 && rec_fork_gen() == g + 1 ? 0 : 1);
  CHECK(child_status(pid) == 0, "glibc fork(): the child's generation is the next one");
  if ((pid = raw_fork()) == 0) _exit(rec_fork_gen_cheap() == g + 1 ? 0 : 1);
  CHECK(child_status(pid) == 0, "raw fork: the child's generation is the next one");
  if ((pid = raw_fork()) == 0) {  /* a grandchild: one more */
    pid_t gc;
    if (rec_fork_gen() != g + 1) _exit(1);
    if ((gc = raw_fork()) == 0) _exit(rec_fork_gen() == g + 2 ? 0 : 1);
    _exit(child_status(gc));
  }
  CHECK(child_status(pid) == 0, "a child's child: two generations on");
  pid = clone(vm_child, stack + (1 << 16), CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
  CHECK(pid > 0 && child_status(pid) == 0 && vm_child_gen == g,
        "a CLONE_VM child (the parent's memory) keeps the parent's generation");
  CHECK(rec_fork_gen() == g, "the parent's generation after its children");
  free(stack);
}

static int fd_sink(void *ud, const void *d, size_t n)
{
  return write(*(int *)ud, d, n) == (ssize_t)n ? 0 : errno;
}

/* An asynchronous buffer whose writer thread stayed in the parent: the
** child fills buffer after buffer (a hand-over would wait for ever for
** the thread) and frees it; none of its bytes reach the sink. */
static void test_buf_forked(void)
{
  int p[2], fd;
  RecBuf b;
  pid_t pid;
  char c;
  CHECK(pipe(p) == 0, "pipe");
  fd = p[1];
  rec_fork_arm();
  CHECK(rec_buf_init(&b, 4096, fd_sink, &fd) == 0 && rec_buf_async(&b) == 0, "async buffer");
  fill(&b, 100);
  CHECK(rec_buf_sync(&b) == 0, "the parent's bytes written");
  {
    char drain[8192];
    CHECK(read(p[0], drain, sizeof(drain)) == 100, "100 bytes in the pipe");
  }
  if ((pid = raw_fork()) == 0) {
    int ok;
    fill(&b, 100000);
    ok = rec_buf_flush(&b) == ECHILD && rec_buf_sync(&b) == ECHILD && rec_buf_failed(&b);
    rec_buf_free(&b);
    _exit(ok ? 0 : 1);
  }
  CHECK(child_status(pid) == 0, "forked child: ECHILD, no hang, freed");
  fill(&b, 100);
  CHECK(rec_buf_sync(&b) == 0, "the parent writes on");
  rec_buf_free(&b);
  close(p[1]);
  {
    char drain[8192];
    ssize_t n = read(p[0], drain, sizeof(drain));
    CHECK(n == 100 && read(p[0], &c, 1) == 0, "only the parent's bytes reached the pipe");
  }
  close(p[0]);
}

/* -- Bounded writes ---------------------------------------------------- */

typedef struct Slow {
  int fd;
  size_t want, got;
} Slow;

/* Reads 4 KiB every 5 ms until it has all it wants. */
static void *slow_reader(void *arg)
{
  Slow *s = arg;
  char buf[4096];
  while (s->got < s->want) {
    struct timespec ts = {0, 5 * 1000 * 1000};
    ssize_t n;
    nanosleep(&ts, NULL);
    n = read(s->fd, buf, sizeof(buf));
    if (n <= 0) break;
    s->got += (size_t)n;
  }
  return NULL;
}

static void test_fdout_kind(int sock, int nonblock)
{
  enum { LEN = 1 << 20 };
  char *data = calloc(1, LEN);
  int p[2];
  RecFdOut o;
  Slow s;
  pthread_t th;
  char what[96];
  snprintf(what, sizeof(what), "%s%s", sock ? "socket" : "pipe", nonblock ? ", O_NONBLOCK" : "");
  CHECK((sock ? socketpair(AF_UNIX, SOCK_STREAM, 0, p) : pipe(p)) == 0, what);
  if (nonblock) fcntl(p[1], F_SETFL, fcntl(p[1], F_GETFL) | O_NONBLOCK);
  /* A reader that never reads: the write gives up after the timeout. */
  rec_fdout_init(&o, p[1], 100);
  CHECK(o.kind == (sock ? REC_FDOUT_SOCKET : REC_FDOUT_STREAM), what);
  CHECK(rec_fdout_write(&o, data, LEN) == ETIMEDOUT, what);
  close(p[0]);
  close(p[1]);
  /* A slow reader that reads on: waited for, everything written. */
  CHECK((sock ? socketpair(AF_UNIX, SOCK_STREAM, 0, p) : pipe(p)) == 0, what);
  if (nonblock) fcntl(p[1], F_SETFL, fcntl(p[1], F_GETFL) | O_NONBLOCK);
  rec_fdout_init(&o, p[1], 2000);
  s.fd = p[0];
  s.want = LEN / 4;
  s.got = 0;
  pthread_create(&th, NULL, slow_reader, &s);
  CHECK(rec_fdout_write(&o, data, LEN / 4) == 0, what);
  pthread_join(th, NULL);
  close(p[0]);
  close(p[1]);
  free(data);
}

static void test_fdout(void)
{
  char dir[] = "/tmp/rec_unit_fdout.XXXXXX", fifo[64];
  int fd;
  signal(SIGPIPE, SIG_IGN);
  test_fdout_kind(0, 0);
  test_fdout_kind(0, 1);
  test_fdout_kind(1, 0);
  /* A FIFO that no reader opens: the open gives up after the timeout. */
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  snprintf(fifo, sizeof(fifo), "%s/f", dir);
  CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
  fd = rec_fdout_open(fifo, O_WRONLY, 0644, 100);
  CHECK(fd < 0 && errno == ETIMEDOUT, "a FIFO without a reader: ETIMEDOUT");
  unlink(fifo);
  rmdir(dir);
}

/* -- Snapshot temporaries ---------------------------------------------- */

static int file_is(const char *path, const char *want)
{
  char buf[64] = {0};
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
  if (f) fclose(f);
  return f && n == strlen(want) && !memcmp(buf, want, n);
}

static void put(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

/* A user's file and a user's link at the temporary name: neither is
** opened, truncated, followed or removed; the target gets the bytes. */
static void test_outfile_tmp(void)
{
  char dir[] = "/tmp/rec_unit_out.XXXXXX", target[96], tmp[128], victim[96];
  RecOutFile o;
  const char *why;
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  snprintf(target, sizeof(target), "%s/snap.ljh", dir);
  snprintf(tmp, sizeof(tmp), "%s.tmp%ld", target, (long)getpid());
  snprintf(victim, sizeof(victim), "%s/victim", dir);
  put(tmp, "USER");
  CHECK(rec_outfile_open(&o, target, &why) == 0, "open beside a user's file");
  fputs("SNAP", o.f);
  CHECK(rec_outfile_commit(&o, 1) == 0, "commit");
  CHECK(file_is(target, "SNAP") && file_is(tmp, "USER"), "the user's file stays, the target written");
  CHECK(rec_outfile_open(&o, target, &why) == 0, "open again");
  CHECK(rec_outfile_commit(&o, 0) == 0 && file_is(tmp, "USER") && file_is(target, "SNAP"),
        "a failed snapshot removes its own file only");
  unlink(tmp);
  put(victim, "VICTIM");
  CHECK(symlink(victim, tmp) == 0, "symlink");
  CHECK(rec_outfile_open(&o, target, &why) == 0, "open beside a user's link");
  fputs("SNAP2", o.f);
  CHECK(rec_outfile_commit(&o, 1) == 0, "commit");
  {
    struct stat st;
    CHECK(!lstat(tmp, &st) && S_ISLNK(st.st_mode) && file_is(victim, "VICTIM") && file_is(target, "SNAP2"),
          "the user's link stays, its target untouched");
  }
  {
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "cleanup");
  }
}

int main(void)
{
  test_uleb();
  test_buf(0);
  test_buf(1);
  test_map();
  test_map_del();
  test_sample_set();
  test_sample_stops();
  test_fork_gen();
  test_buf_forked();
  test_fdout();
  test_outfile_tmp();
  printf("%s\n", failures ? "rec_unit_test: FAILED" : "rec_unit_test: ok");
  return failures ? 1 : 0;
}
