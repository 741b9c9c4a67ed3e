/* syscall(2), for pidfd_open: a wait woken when the child ends. */
#define _DEFAULT_SOURCE
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "mapp_error.h"

static volatile sig_atomic_t running_child = 0;

/* Pass the signal to the child and wait for it (mpirun needs a moment to
 * stop its ranks), so no launch outlives the harness; a child still there
 * after 10 s is killed. A launch with a time limit has the harness as its
 * subreaper, and mpirun may exit while its ranks are still dying: those
 * orphans are waited for too, within the same 10 s. Then die of the signal
 * ourselves, with the default action, so our parent sees the real cause.
 * Only async-signal-safe calls. */
static void forward_and_die(int sig) {
  pid_t child = (pid_t)running_child;
  if (child > 0) {
    kill(child, sig);
    kill(-child, sig); /* its process group, where it has one of its own */
    const struct timespec tick = {0, 50 * 1000 * 1000};
    int waited = 0;
    while (waitpid(child, NULL, WNOHANG) == 0 && waited++ < 200) nanosleep(&tick, NULL);
    if (waited > 200) {
      kill(child, SIGKILL);
      waitpid(child, NULL, 0);
    }
    /* The launch's orphans (ranks mpirun left dying) are ours as their
     * subreaper: wait until none is left, reaping each as it ends. */
    for (pid_t got; (got = waitpid(-1, NULL, WNOHANG)) >= 0 && waited++ < 200;)
      if (got == 0) nanosleep(&tick, NULL);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

static void install_forwarding(void) {
  struct sigaction sa = {.sa_handler = forward_and_die};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

static double monotonic_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* What the child failed at before the program ran, sent up the report pipe. */
typedef enum { STEP_LOG, STEP_CWD, STEP_EXEC } child_step;
typedef struct {
  child_step step;
  int err;
} child_failure;

/* In the child: environment, output redirection (before chdir, so a
 * relative log path means the same as in the parent), directory, exec. */
static void child_exec(const proc_request *req, int stdout_fd, int report_fd) {
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  if (req->time_limit_s > 0) {
    /* A group of its own, so the limit can signal all of it at once; off
     * the terminal's foreground group, so nothing of it may read the
     * terminal (a stopped mpirun would never end): stdin is /dev/null. */
    setpgid(0, 0);
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO);
    if (null > STDIN_FILENO) close(null);
  }
  for (size_t i = 0; req->env_names && i < req->env_names->count; ++i)
    setenv(req->env_names->items[i], req->env_values->items[i], 1);
  child_failure failure = {STEP_LOG, 0};
  if (req->log_path) {
    int log = open(req->log_path, O_WRONLY | O_CREAT | O_APPEND, 0666);
    if (log < 0) failure.err = errno;
    if (log >= 0 && stdout_fd < 0) dup2(log, STDOUT_FILENO);
    if (log >= 0) dup2(log, STDERR_FILENO);
    if (log >= 0) close(log);
  }
  if (stdout_fd >= 0) dup2(stdout_fd, STDOUT_FILENO);
  if (!failure.err && req->err_path) {
    int err = open(req->err_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (err < 0) failure.err = errno;
    if (err >= 0) dup2(err, STDERR_FILENO);
    if (err >= 0) close(err);
  }
  if (!failure.err && req->cwd && chdir(req->cwd) != 0) failure = (child_failure){STEP_CWD, errno};
  if (!failure.err) {
    execvp(req->argv->items[0], strv_argv(req->argv));
    failure = (child_failure){STEP_EXEC, errno};
  }
  ssize_t ignored = write(report_fd, &failure, sizeof failure);
  (void)ignored;
  _exit(127);
}

/* Reads everything from fd into a malloc'd string. */
static int read_all(int fd, char **text) {
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  for (ssize_t got = 1; buf && got > 0;) {
    if (len + 1 == cap) {
      char *grown = realloc(buf, cap *= 2);
      if (!grown) free(buf);
      buf = grown;
      if (!buf) break;
    }
    got = read(fd, buf + len, cap - len - 1);
    if (got > 0) len += (size_t)got;
    if (got < 0 && errno == EINTR) got = 1;
  }
  if (!buf) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory reading a child's output");
  buf[len] = '\0';
  *text = buf;
  return MAPP_OK;
}

static void set_exit_code(int wstatus, proc_outcome *out) {
  out->exit_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
}

static int wait_child(pid_t pid, proc_outcome *out) {
  int wstatus;
  while (waitpid(pid, &wstatus, 0) < 0)
    if (errno != EINTR) return mapp_fail(MAPP_ERR_SYSTEM, "waitpid failed: %s", strerror(errno));
  set_exit_code(wstatus, out);
  return MAPP_OK;
}

static void sleep_seconds(double s) {
  struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&ts, NULL);
}

/* ---------------------------------------------------------------- the tree */

enum { MAX_TREE = 4096 };

/* The parent of pid from /proc/PID/stat (after the command's closing
 * parenthesis, which the command itself may contain); 0 when it is gone. */
static pid_t parent_of(pid_t pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t got = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[got] = '\0';
  const char *close_paren = strrchr(buf, ')');
  char state;
  int ppid;
  if (!close_paren || sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2) return 0;
  return (pid_t)ppid;
}

/* Every live descendant of this process (the launch's, as only one child
 * runs at a time): with the subreaper set, orphans of the launch are ours. */
static size_t our_descendants(pid_t *out, size_t max) {
  pid_t pids[MAX_TREE], parents[MAX_TREE];
  size_t n = 0, found = 0;
  DIR *proc = opendir("/proc");
  if (!proc) return 0;
  for (struct dirent *e; (e = readdir(proc)) && n < MAX_TREE;) {
    char *end;
    long pid = strtol(e->d_name, &end, 10);
    if (*end || pid <= 0) continue;
    pid_t parent = parent_of((pid_t)pid);
    if (parent > 0) pids[n] = (pid_t)pid, parents[n++] = parent;
  }
  closedir(proc);
  /* Breadth first from ourselves: out[] is the queue. */
  pid_t self = getpid();
  for (size_t head = 0;; ++head) {
    pid_t from = head == 0 ? self : out[head - 1];
    for (size_t i = 0; i < n && found < max; ++i)
      if (parents[i] == from) out[found++] = pids[i];
    if (head >= found) break;
  }
  return found;
}

static void signal_tree(pid_t child, int sig) {
  pid_t tree[MAX_TREE];
  kill(-child, sig);
  size_t n = our_descendants(tree, MAX_TREE);
  for (size_t i = 0; i < n; ++i) kill(tree[i], sig);
}

/* Reaps the child (its status into *out the first time) and any orphan
 * that was handed to us and has ended. */
static void reap(pid_t child, bool *child_done, proc_outcome *out) {
  int wstatus;
  for (pid_t got; (got = waitpid(-1, &wstatus, WNOHANG)) > 0;)
    if (got == child && !*child_done) {
      set_exit_code(wstatus, out);
      *child_done = true;
    }
}

/* Waits up to `seconds` for the child and every other descendant to end. */
static bool tree_ends_within(pid_t child, double seconds, bool *child_done, proc_outcome *out) {
  pid_t tree[MAX_TREE];
  for (double waited = 0.0;; waited += 0.02) {
    reap(child, child_done, out);
    if (*child_done && our_descendants(tree, MAX_TREE) == 0) return true;
    if (waited >= seconds) return false;
    sleep_seconds(0.02);
  }
}

/* At the limit: SIGTERM to the whole tree, SIGKILL to what is left after
 * the grace period, then every process of it reaped. */
static void stop_tree(pid_t child, double grace, bool *child_done, proc_outcome *out) {
  signal_tree(child, SIGTERM);
  if (tree_ends_within(child, grace, child_done, out)) return;
  out->killed = true;
  for (int round = 0; round < 50 && !tree_ends_within(child, 0.1, child_done, out); ++round)
    signal_tree(child, SIGKILL);
}

/* Sleeps until the child ends or `seconds` pass: on the child's pidfd when
 * the kernel has them (woken at once when it ends), else a short sleep. */
static void await_child(int pidfd, double seconds) {
  if (seconds <= 0) return;
  if (pidfd >= 0) {
    struct pollfd p = {.fd = pidfd, .events = POLLIN};
    int ms = seconds > 1e6 ? 1000000000 : (int)(seconds * 1000.0) + 1;
    while (poll(&p, 1, ms) < 0 && errno == EINTR) {
    }
    return;
  }
  sleep_seconds(seconds < 0.02 ? seconds : 0.02);
}

/* The child under a time limit, until it ends or the limit passes. Whatever
 * of the launch outlived its launcher is ended too: a run is over when its
 * launcher is. */
static int wait_child_limited(pid_t pid, const proc_request *req, double start, proc_outcome *out) {
  bool done = false;
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  while (!done) {
    reap(pid, &done, out);
    if (done) break;
    double left = req->time_limit_s - (monotonic_seconds() - start);
    if (left <= 0) {
      out->timed_out = true;
      stop_tree(pid, req->grace_s > 0 ? req->grace_s : PROC_DEFAULT_GRACE_S, &done, out);
      break;
    }
    await_child(pidfd, left);
  }
  if (pidfd >= 0) close(pidfd);
  if (!tree_ends_within(pid, 0.0, &done, out)) stop_tree(pid, 0.0, &done, out);
  if (!done) return mapp_fail(MAPP_ERR_SYSTEM, "process %d did not end after SIGKILL", (int)pid);
  return MAPP_OK;
}

/* The harness adopts what a time-limited launch leaves without a parent. */
static int become_subreaper(void) {
  static bool done = false;
  if (done) return MAPP_OK;
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
    return mapp_fail(MAPP_ERR_SYSTEM, "prctl(PR_SET_CHILD_SUBREAPER) failed: %s", strerror(errno));
  done = true;
  return MAPP_OK;
}

/* The failure the child sent up the report pipe, if any. */
static int start_error(int report_fd, const proc_request *req) {
  child_failure failure;
  ssize_t got;
  do got = read(report_fd, &failure, sizeof failure);
  while (got < 0 && errno == EINTR);
  if (got != (ssize_t)sizeof failure) return MAPP_OK;
  const char *program = req->argv->items[0], *why = strerror(failure.err);
  switch (failure.step) {
  case STEP_LOG:
    return mapp_fail(MAPP_ERR_INPUT, "cannot write the log %s for %s: %s", req->log_path ? req->log_path : req->err_path,
                     program, why);
  case STEP_CWD: return mapp_fail(MAPP_ERR_INPUT, "cannot run %s in %s: %s", program, req->cwd, why);
  default: return mapp_fail(MAPP_ERR_INPUT, "cannot run %s: %s", program, why);
  }
}

/* A pipe closed on exec: the report pipe reads end-of-file exactly when exec
 * succeeded. */
static int cloexec_pipe(int fds[2]) {
  if (pipe(fds) != 0) return mapp_fail(MAPP_ERR_SYSTEM, "pipe failed: %s", strerror(errno));
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  return MAPP_OK;
}

static int spawn(const proc_request *req, char **captured, proc_outcome *out) {
  int report[2], capture[2] = {-1, -1};
  *out = (proc_outcome){0};
  if (req->time_limit_s > 0) MAPP_TRY(become_subreaper());
  if (cloexec_pipe(report) != MAPP_OK || (captured && cloexec_pipe(capture) != MAPP_OK))
    return MAPP_ERR_SYSTEM;
  install_forwarding();
  double start = monotonic_seconds();
  fflush(NULL); /* the child must not flush our buffered output a second time */
  pid_t pid = fork();
  if (pid < 0) return mapp_fail(MAPP_ERR_SYSTEM, "fork failed: %s", strerror(errno));
  if (pid == 0) child_exec(req, capture[1], report[1]);
  running_child = pid;
  if (req->time_limit_s > 0) setpgid(pid, pid); /* as the child does: whichever runs first */
  close(report[1]);
  if (captured) close(capture[1]);
  int status = captured ? read_all(capture[0], captured) : MAPP_OK;
  int waited = req->time_limit_s > 0 ? wait_child_limited(pid, req, start, out) : wait_child(pid, out);
  running_child = 0;
  out->elapsed_s = monotonic_seconds() - start;
  int started = start_error(report[0], req);
  close(report[0]);
  if (captured) close(capture[0]);
  if (started != MAPP_OK) {
    if (captured) {
      free(*captured);
      *captured = NULL;
    }
    return started;
  }
  return status != MAPP_OK ? status : waited;
}

int proc_run(const proc_request *req, proc_outcome *out) { return spawn(req, NULL, out); }

int proc_capture(const proc_request *req, char **text, proc_outcome *out) {
  *text = NULL;
  return spawn(req, text, out);
}

void proc_print_log_tail(const char *log_path, int lines, FILE *stream) {
  char *text;
  if (read_text_file(log_path, &text) != MAPP_OK) {
    mapp_error_clear();
    return;
  }
  size_t len = strlen(text);
  while (len && text[len - 1] == '\n') text[--len] = '\0';
  const char *start = text + len;
  for (int seen = 0; start > text && seen < lines; --start)
    if (start[-1] == '\n' && ++seen == lines) break;
  for (const char *line = start; *line;) {
    const char *newline = strchr(line, '\n');
    int width = newline ? (int)(newline - line) : (int)strlen(line);
    fprintf(stream, "  | %.*s\n", width, line);
    line += width + (newline != NULL);
  }
  free(text);
}

char *proc_log_error(const char *log_path, const char *prog) {
  char *text;
  if (read_text_file(log_path, &text) != MAPP_OK) {
    mapp_error_clear();
    return NULL;
  }
  char *marker = str_printf("%s: error: ", prog), *message = NULL;
  char *hit = marker ? strstr(text, marker) : NULL;
  if (hit) {
    hit += strlen(marker);
    message = strndup(hit, strcspn(hit, "\n"));
  }
  free(marker);
  free(text);
  return message;
}
