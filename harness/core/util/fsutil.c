/* flock(2) is BSD, not POSIX: ask glibc for it. */
#define _DEFAULT_SOURCE 1
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mapp_error.h"

char *path_join(const char *dir, const char *name) {
  if (name[0] == '/' || dir[0] == '\0') return strdup(name);
  size_t len = strlen(dir);
  return str_printf("%s%s%s", dir, dir[len - 1] == '/' ? "" : "/", name);
}

char *str_vprintf(const char *fmt, va_list ap) {
  va_list again;
  va_copy(again, ap);
  int len = vsnprintf(NULL, 0, fmt, ap);
  char *out = len >= 0 ? malloc((size_t)len + 1) : NULL;
  if (out) vsnprintf(out, (size_t)len + 1, fmt, again);
  va_end(again);
  return out;
}

char *str_printf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *out = str_vprintf(fmt, ap);
  va_end(ap);
  return out;
}

bool path_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

bool path_is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

time_t path_mtime(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? st.st_mtime : 0;
}

int make_dirs(const char *path) {
  if (path[0] == '\0') return mapp_fail(MAPP_ERR_INPUT, "empty directory name");
  char *copy = strdup(path);
  if (!copy) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  int status = MAPP_OK;
  /* Create each prefix in turn; an existing directory is fine. */
  for (char *p = copy + 1; status == MAPP_OK; ++p) {
    bool end = *p == '\0';
    if (*p != '/' && !end) continue;
    *p = '\0';
    if (mkdir(copy, 0777) != 0 && errno != EEXIST)
      status = mapp_fail(MAPP_ERR_INPUT, "cannot create directory %s: %s", copy, strerror(errno));
    else if (!path_is_dir(copy))
      status = mapp_fail(MAPP_ERR_INPUT, "%s exists and is not a directory", copy);
    if (end) break;
    *p = '/';
  }
  free(copy);
  return status;
}

int read_text_file(const char *path, char **text) {
  *text = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return mapp_fail(MAPP_ERR_INPUT, "cannot read %s: %s", path, strerror(errno));
  size_t cap = 4096, len = 0;
  char *buf = malloc(cap);
  while (buf) {
    len += fread(buf + len, 1, cap - len - 1, f);
    if (len < cap - 1) break;
    char *grown = realloc(buf, cap *= 2);
    if (!grown) free(buf);
    buf = grown;
  }
  bool failed = ferror(f);
  fclose(f);
  if (!buf) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory reading %s", path);
  if (failed) {
    free(buf);
    return mapp_fail(MAPP_ERR_INPUT, "error reading %s", path);
  }
  buf[len] = '\0';
  *text = buf;
  return MAPP_OK;
}

/* Writes `len` bytes to "<path>.tmp" and renames it over path. */
static int write_bytes_atomically(const char *path, const char *bytes, size_t len) {
  char *tmp = str_printf("%s.tmp", path);
  if (!tmp) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  FILE *f = fopen(tmp, "wb");
  bool ok = f && fwrite(bytes, 1, len, f) == len;
  ok = f && fclose(f) == 0 && ok;
  ok = ok && rename(tmp, path) == 0;
  int status = ok ? MAPP_OK : mapp_fail(MAPP_ERR_INPUT, "cannot write %s: %s", path, strerror(errno));
  if (!ok) unlink(tmp);
  free(tmp);
  return status;
}

int write_text_file(const char *path, const char *text) {
  return write_bytes_atomically(path, text, strlen(text));
}

int copy_text_file(const char *from, const char *to) {
  char *text;
  MAPP_TRY(read_text_file(from, &text));
  int status = write_text_file(to, text);
  free(text);
  return status;
}

char *path_dirname(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return strdup(".");
  if (slash == path) return strdup("/");
  return strndup(path, (size_t)(slash - path));
}

char *path_stem(const char *path, const char *ext) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  size_t len = strlen(base), extlen = strlen(ext);
  if (len > extlen && strcmp(base + len - extlen, ext) == 0) len -= extlen;
  return strndup(base, len);
}

char *path_absolute(const char *path) {
  if (path[0] == '/') return strdup(path);
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return NULL;
  return path_join(cwd, path);
}

/* "pid 1234 (mapp sweep)" from the lock file of the holder, or "pid unknown". */
static void lock_holder(int fd, char *buf, size_t len) {
  char text[128] = "";
  ssize_t got = pread(fd, text, sizeof text - 1, 0);
  text[got > 0 ? got : 0] = '\0';
  text[strcspn(text, "\n")] = '\0';
  snprintf(buf, len, "%s", text[0] ? text : "pid unknown");
}

int dir_lock(const char *dir, const char *verb, int *fd) {
  *fd = -1;
  char *path = path_join(dir, ".lock");
  if (!path) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  /* Close-on-exec: the apps a sweep launches must not inherit (and keep)
   * the lock after mapp itself has ended. */
  int lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  int status = MAPP_OK;
  if (lock < 0) {
    status = mapp_fail(MAPP_ERR_INPUT, "cannot lock results folder %s (%s: %s)", dir, path, strerror(errno));
  } else if (flock(lock, LOCK_EX | LOCK_NB) != 0) {
    char holder[160];
    lock_holder(lock, holder, sizeof holder);
    status = errno == EWOULDBLOCK
                 ? mapp_fail(MAPP_ERR_INPUT, "results folder %s is in use by %s: wait for it to end, or use "
                                             "another --out", dir, holder)
                 : mapp_fail(MAPP_ERR_SYSTEM, "cannot lock %s: %s", path, strerror(errno));
    close(lock);
  } else {
    char text[160];
    int len = snprintf(text, sizeof text, "pid %ld (mapp %s)\n", (long)getpid(), verb);
    if (ftruncate(lock, 0) != 0 || pwrite(lock, text, (size_t)len, 0) != len)
      status = mapp_fail(MAPP_ERR_SYSTEM, "cannot write %s: %s", path, strerror(errno));
    if (status == MAPP_OK) *fd = lock;
    else close(lock);
  }
  free(path);
  return status;
}

void dir_unlock(int *fd) {
  if (*fd >= 0) close(*fd); /* closing drops the flock; the file stays for the next holder */
  *fd = -1;
}

bool program_on_path(const char *name) {
  const char *path = getenv("PATH");
  for (const char *dir = path; dir && *dir;) {
    size_t len = strcspn(dir, ":");
    char *candidate = str_printf("%.*s/%s", (int)len, dir, name);
    bool found = candidate && access(candidate, X_OK) == 0;
    free(candidate);
    if (found) return true;
    dir += len + (dir[len] == ':');
  }
  return false;
}
