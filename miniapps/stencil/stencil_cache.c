/* The cache of generated programs: one entry per key, a JSON manifest per
 * entry recording every input of the key, atomic publication (built in a
 * private folder, renamed into place), and refusal, naming what differs, of
 * anything missing, stale or damaged. Unlike the seed's Run mode, nothing
 * is ever loaded silently. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "stencil.h"
#include "stencil_build_config.h"

#define MANIFEST "manifest.json"
#define OBJECT "step.so"
#define SOURCE_C "step.c"
#define SOURCE_CU "step.cu"
#define LOG "build.log"

/* ------------------------------------------------------------ hashing */

/* FNV-1a, 64 bits: a content hash for cache keys (not a security hash). */
static unsigned long long fnv1a(const void *data, size_t len, unsigned long long h) {
  const unsigned char *p = data;
  for (size_t i = 0; i < len; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}
#define FNV_START 14695981039346656037ULL

static void hex64(unsigned long long h, char out[17]) { snprintf(out, 17, "%016llx", h); }

static int read_file(const char *path, char **data, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return mapp_fail(MAPP_ERR_INPUT, "cannot read %s: %s", path, strerror(errno));
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      char *bigger = realloc(buf, cap *= 2);
      if (!bigger) free(buf);
      buf = bigger;
    }
  }
  fclose(f);
  if (!buf) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory reading %s", path);
  *data = buf, *len = n;
  return MAPP_OK;
}

static int hash_file(const char *path, char out[17], size_t *bytes) {
  char *data = NULL;
  size_t len = 0;
  MAPP_TRY(read_file(path, &data, &len));
  hex64(fnv1a(data, len, FNV_START), out);
  if (bytes) *bytes = len;
  free(data);
  return MAPP_OK;
}

/* ------------------------------------------------------------ toolchain */

/* The configured compiler unless the environment names another (tc->cc,
 * tc->nvcc); the configured flags plus tc->cflags; the configured header
 * folder unless tc->include names another. */
static const char *compiler_path(const stencil_toolchain *tc, mapp_backend backend) {
  const char *other = backend == MAPP_BACKEND_CUDA ? tc->nvcc : tc->cc;
  if (other) return other;
  return backend == MAPP_BACKEND_CUDA ? STENCIL_NVCC : STENCIL_CC;
}
static const char *compiler_variable(mapp_backend backend) {
  return backend == MAPP_BACKEND_CUDA ? "MAPP_STENCIL_NVCC" : "MAPP_STENCIL_CC";
}
static const char *include_dir(const stencil_toolchain *tc) {
  return tc->include ? tc->include : STENCIL_INCLUDE_DIR;
}

static void build_flags(const stencil_toolchain *tc, mapp_backend backend, char *buf, size_t len) {
  const char *extra = tc->cflags;
  if (backend == MAPP_BACKEND_CUDA)
    snprintf(buf, len, "%s%s%s", STENCIL_CUDA_FLAGS, extra ? " " : "", extra ? extra : "");
  else
    snprintf(buf, len, "%s%s%s%s%s", STENCIL_CFLAGS, backend == MAPP_BACKEND_OMP ? " " : "",
             backend == MAPP_BACKEND_OMP ? STENCIL_OPENMP_FLAGS : "", extra ? " " : "", extra ? extra : "");
}

/* The compiler's first line of --version: its identity and version. */
static int compiler_version(const char *cc, mapp_backend backend, char *buf, size_t len) {
  if (access(cc, X_OK) != 0)
    return mapp_fail(MAPP_ERR_INPUT, "no C compiler found: '%s' is not executable (set %s to a compiler)", cc,
                     compiler_variable(backend));
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "'%s' --version 2>&1", cc);
  FILE *p = popen(cmd, "r");
  if (!p) return mapp_fail(MAPP_ERR_SYSTEM, "cannot run %s --version", cc);
  buf[0] = '\0';
  char line[512];
  /* nvcc's version is on its last line; a C compiler's on its first */
  while (fgets(line, sizeof line, p))
    if (!buf[0] || backend == MAPP_BACKEND_CUDA) snprintf(buf, len, "%s", line);
  int rc = pclose(p);
  buf[strcspn(buf, "\n")] = '\0';
  if (rc != 0 || !buf[0])
    return mapp_fail(MAPP_ERR_INPUT, "no C compiler found: '%s --version' failed (set %s to a compiler)", cc,
                     compiler_variable(backend));
  return MAPP_OK;
}

/* The hash of stencil_kernels.h in folder dir, and of the program's own
 * body header where its bodies live in another one (the generated program
 * includes both). */
static int headers_hash(const st_program *p, const char *dir, char out[17]) {
  char header[1200];
  snprintf(header, sizeof header, "%s/stencil_kernels.h", dir);
  MAPP_TRY(hash_file(header, out, NULL));
  if (!p->bodies || !strcmp(p->bodies, "stencil_kernels.h")) return MAPP_OK;
  char bodies[1200], bodies_hash[17];
  snprintf(bodies, sizeof bodies, "%s/%s", dir, p->bodies);
  MAPP_TRY(hash_file(bodies, bodies_hash, NULL));
  hex64(fnv1a(bodies_hash, sizeof bodies_hash, fnv1a(out, 17, FNV_START)), out);
  return MAPP_OK;
}

/* The hash of the program's table (st_program_write): part of the key, so
 * an entry names the program it was generated from. */
static int program_hash(const st_program *p, char out[17]) {
  char *text = NULL;
  size_t len = 0;
  FILE *o = open_memstream(&text, &len);
  if (!o) return mapp_fail(MAPP_ERR_SYSTEM, "cannot open a memory stream for the program's table");
  st_program_write(p, o);
  if (fclose(o) != 0) {
    free(text);
    return mapp_fail(MAPP_ERR_SYSTEM, "cannot write the program's table");
  }
  hex64(fnv1a(text, len, FNV_START), out);
  free(text);
  return MAPP_OK;
}

int stencil_key_make(const stencil_toolchain *tc, const st_program *p, const char *source, int cls,
                     mapp_backend backend, const char *debug, stencil_key *key) {
  memset(key, 0, sizeof *key);
  snprintf(key->program, sizeof key->program, "%s", p->name ? p->name : "none");
  MAPP_TRY(program_hash(p, key->program_hash));
  const char *cc = compiler_path(tc, backend);
  snprintf(key->compiler, sizeof key->compiler, "%s", cc);
  MAPP_TRY(compiler_version(cc, backend, key->compiler_version, sizeof key->compiler_version));
  build_flags(tc, backend, key->flags, sizeof key->flags);
  hex64(fnv1a(source, strlen(source), FNV_START), key->source_hash);
  const char *include = include_dir(tc);
  if (strlen(include) >= sizeof key->include)
    return mapp_fail(MAPP_ERR_INPUT, "the stencil header folder '%s' is longer than %zu characters", include,
                     sizeof key->include - 1);
  snprintf(key->include, sizeof key->include, "%s", include);
  MAPP_TRY(headers_hash(p, key->include, key->header_hash));
  st_class_name(cls, key->cls, sizeof key->cls);
  snprintf(key->backend, sizeof key->backend, "%s", mapp_backend_name(backend));
  snprintf(key->debug, sizeof key->debug, "%s", debug);
  const char *parts[] = {key->source_hash, key->header_hash, key->compiler, key->compiler_version,
                         key->flags, key->cls, key->backend, key->debug, key->program, key->program_hash};
  unsigned long long h = FNV_START;
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; ++i) h = fnv1a(parts[i], strlen(parts[i]) + 1, h);
  hex64(h, key->key);
  return MAPP_OK;
}

const char *stencil_cache_default(const char *root) {
  static char buf[1024];
  if (!root) return ".mapp-cache/stencil";
  snprintf(buf, sizeof buf, "%s/stencil", root);
  return buf;
}

/* ------------------------------------------------------------ manifest */

/* The key's inputs by their manifest names and the words a refusal uses. */
typedef struct {
  const char *json, *words;
  size_t offset;
} key_field;
static const key_field key_fields[] = {
    {"class", "code-path class", offsetof(stencil_key, cls)},
    {"program", "program", offsetof(stencil_key, program)},
    {"source_hash", "generated source (the step list)", offsetof(stencil_key, source_hash)},
    {"program_hash", "program table", offsetof(stencil_key, program_hash)},
    {"header_hash", "stencil headers (stencil_kernels.h, the program's bodies)", offsetof(stencil_key, header_hash)},
    {"compiler", "compiler", offsetof(stencil_key, compiler)},
    {"compiler_version", "compiler version", offsetof(stencil_key, compiler_version)},
    {"flags", "compiler flags", offsetof(stencil_key, flags)},
    {"backend", "backend", offsetof(stencil_key, backend)},
    {"debug", "debug passes", offsetof(stencil_key, debug)},
};
#define NKEY_FIELDS (sizeof key_fields / sizeof key_fields[0])

static const char *key_value(const stencil_key *k, size_t i) { return (const char *)k + key_fields[i].offset; }

/* The inputs of a manifest that differ from key, as "a, b" into buf;
 * returns how many. */
static int key_differences(json_t *manifest, const stencil_key *key, char *buf, size_t len) {
  int n = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < NKEY_FIELDS; ++i) {
    const char *have = json_string_value(json_object_get(manifest, key_fields[i].json));
    const char *want = key_value(key, i);
    if (have && !strcmp(have, want)) continue;
    size_t used = strlen(buf);
    if (have && (!strcmp(key_fields[i].json, "compiler_version") || !strcmp(key_fields[i].json, "flags") ||
                 !strcmp(key_fields[i].json, "class") || !strcmp(key_fields[i].json, "debug") ||
                 !strcmp(key_fields[i].json, "program")))
      snprintf(buf + used, len - used, "%s%s ('%s' cached, '%s' now)", n ? ", " : "", key_fields[i].words, have, want);
    else
      snprintf(buf + used, len - used, "%s%s", n ? ", " : "", key_fields[i].words);
    ++n;
  }
  return n;
}

static json_t *manifest_load(const char *entry, char *why, size_t len) {
  char path[1200];
  snprintf(path, sizeof path, "%s/" MANIFEST, entry);
  json_error_t err;
  json_t *m = json_load_file(path, 0, &err);
  if (!m) snprintf(why, len, "manifest %s is corrupt or truncated (%s, line %d)", path, err.text, err.line);
  return m;
}

/* ------------------------------------------------------------ folders */

static int mkdir_p(const char *dir) {
  char path[1024];
  snprintf(path, sizeof path, "%s", dir);
  for (char *p = path + 1; *p; ++p)
    if (*p == '/') {
      *p = '\0';
      if (mkdir(path, 0777) != 0 && errno != EEXIST) break;
      *p = '/';
    }
  if (mkdir(path, 0777) != 0 && errno != EEXIST)
    return mapp_fail(MAPP_ERR_INPUT, "cannot create cache folder %s: %s", dir, strerror(errno));
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
    return mapp_fail(MAPP_ERR_INPUT, "cache folder %s is not a folder", dir);
  if (access(path, W_OK) != 0) return mapp_fail(MAPP_ERR_INPUT, "cache folder %s cannot be written", dir);
  return MAPP_OK;
}

static void remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  char path[1300];
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
  closedir(d);
  rmdir(dir);
}

static int write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) return mapp_fail(MAPP_ERR_INPUT, "cannot write %s: %s", path, strerror(errno));
  int ok = fputs(text, f) >= 0;
  ok &= fclose(f) == 0;
  return ok ? MAPP_OK : mapp_fail(MAPP_ERR_INPUT, "cannot write %s", path);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ------------------------------------------------------------ build */

static int compile_entry(const char *tmp, const stencil_key *key, mapp_backend backend, char *cmd, size_t cmdlen) {
  const char *src = backend == MAPP_BACKEND_CUDA ? SOURCE_CU : SOURCE_C;
  if (backend == MAPP_BACKEND_CUDA)
    snprintf(cmd, cmdlen, "'%s' %s -I'%s' -o '%s/" OBJECT "' '%s/%s' > '%s/" LOG "' 2>&1", key->compiler,
             key->flags, key->include, tmp, tmp, src, tmp);
  else
    snprintf(cmd, cmdlen, "'%s' %s -I'%s' -o '%s/" OBJECT "' '%s/%s' > '%s/" LOG "' 2>&1", key->compiler,
             key->flags, key->include, tmp, tmp, src, tmp);
  int rc = system(cmd);
  return rc == 0 ? MAPP_OK : MAPP_ERR_INPUT;
}

static int write_manifest(const char *tmp, const stencil_key *key, const char *cmd, double build_s) {
  char object[1200], hash[17];
  size_t bytes = 0;
  snprintf(object, sizeof object, "%s/" OBJECT, tmp);
  MAPP_TRY(hash_file(object, hash, &bytes));
  char when[64];
  mapp_utc_now(when, sizeof when);
  json_t *m = json_object();
  json_object_set_new(m, "schema", json_string("mapp-stencil-cache/1"));
  json_object_set_new(m, "key", json_string(key->key));
  for (size_t i = 0; i < NKEY_FIELDS; ++i) json_object_set_new(m, key_fields[i].json, json_string(key_value(key, i)));
  json_object_set_new(m, "object", json_string(OBJECT));
  json_object_set_new(m, "object_hash", json_string(hash));
  json_object_set_new(m, "object_bytes", json_integer((json_int_t)bytes));
  json_object_set_new(m, "compile_command", json_string(cmd));
  json_object_set_new(m, "build_seconds", json_real(build_s));
  json_object_set_new(m, "built", json_string(when));
  json_object_set_new(m, "log", json_string(LOG));
  char path[1200];
  snprintf(path, sizeof path, "%s/" MANIFEST, tmp);
  int rc = json_dump_file(m, path, JSON_INDENT(2) | JSON_SORT_KEYS);
  json_decref(m);
  return rc == 0 ? MAPP_OK : mapp_fail(MAPP_ERR_INPUT, "cannot write %s", path);
}

/* Build into a private folder and rename it into place: a reader sees the
 * old entry, no entry, or the whole new one, never half of one. */
static int build_entry(const char *dir, const char *entry, const stencil_key *key, const char *source,
                       mapp_backend backend, stencil_cache_stats *stats) {
  double t0 = now_s();
  char tmp[1200], path[1300], cmd[4096];
  snprintf(tmp, sizeof tmp, "%s/.tmp-%s-%ld-%ld", dir, key->key, (long)getpid(), (long)(t0 * 1e6) % 1000000);
  if (mkdir(tmp, 0777) != 0)
    return mapp_fail(MAPP_ERR_INPUT, "cannot write to cache folder %s: %s", dir, strerror(errno));
  snprintf(path, sizeof path, "%s/%s", tmp, backend == MAPP_BACKEND_CUDA ? SOURCE_CU : SOURCE_C);
  int status = write_text(path, source);
  if (status == MAPP_OK && compile_entry(tmp, key, backend, cmd, sizeof cmd) != MAPP_OK) {
    /* keep the log where it can be read */
    char failed[1200];
    snprintf(failed, sizeof failed, "%s/failed-%s-%s", dir, key->cls, key->key);
    remove_tree(failed);
    const char *where = rename(tmp, failed) == 0 ? failed : tmp;
    return mapp_fail(MAPP_ERR_INPUT, "compile error building class %s: see %s/" LOG, key->cls, where);
  }
  double build_s = now_s() - t0;
  if (status == MAPP_OK) status = write_manifest(tmp, key, cmd, build_s);
  if (status != MAPP_OK) {
    remove_tree(tmp);
    return status;
  }
  /* Replace a stale entry of the same key: move it aside, then publish. */
  char stale[1300];
  snprintf(stale, sizeof stale, "%s/.stale-%s-%ld", dir, key->key, (long)getpid());
  bool moved = rename(entry, stale) == 0;
  if (rename(tmp, entry) != 0) {
    remove_tree(tmp); /* another builder published the same key first: use theirs */
  }
  if (moved) remove_tree(stale);
  stats->built = 1;
  stats->build_s = build_s;
  return MAPP_OK;
}

/* ------------------------------------------------------------ lookup */

/* The nearest entry to key in dir (fewest differing inputs), for a refusal
 * that names what differs. */
static void nearest_entry(const char *dir, const stencil_key *key, char *msg, size_t len) {
  DIR *d = opendir(dir);
  int best = 1 << 20;
  char best_diff[2048] = "", best_name[300] = "";
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) {
      if (e->d_name[0] == '.' || !strncmp(e->d_name, "failed-", 7)) continue;
      char entry[1300], why[1400], diff[2048];
      snprintf(entry, sizeof entry, "%s/%s", dir, e->d_name);
      json_t *m = manifest_load(entry, why, sizeof why);
      if (!m) continue;
      int n = key_differences(m, key, diff, sizeof diff);
      const char *cls = json_string_value(json_object_get(m, "class"));
      /* prefer the same class: it is what this rank would have loaded */
      if (cls && !strcmp(cls, key->cls)) n -= 100;
      if (n < best) {
        best = n;
        snprintf(best_diff, sizeof best_diff, "%s", diff);
        snprintf(best_name, sizeof best_name, "%s", e->d_name);
      }
      json_decref(m);
    }
    closedir(d);
  }
  if (best_name[0])
    snprintf(msg, len, "no cache entry for class %s (key %s) in %s; the nearest, %s, differs in: %s", key->cls,
             key->key, dir, best_name, best_diff);
  else
    snprintf(msg, len, "no cache entry for class %s (key %s) in %s: build it with --mode build or build-and-run",
             key->cls, key->key, dir);
}

/* Check entry against key; "" in why when it may be loaded. */
static void check_entry(const char *entry, const stencil_key *key, char *why, size_t len) {
  why[0] = '\0';
  json_t *m = manifest_load(entry, why, len);
  if (!m) return;
  char diff[2048];
  if (key_differences(m, key, diff, sizeof diff)) {
    snprintf(why, len, "cache entry %s differs in: %s", entry, diff);
  } else {
    const char *want = json_string_value(json_object_get(m, "object_hash"));
    char object[1200], have[17] = "";
    size_t bytes = 0;
    snprintf(object, sizeof object, "%s/" OBJECT, entry);
    if (hash_file(object, have, &bytes) != MAPP_OK) {
      mapp_error_clear();
      snprintf(why, len, "shared object %s is missing", object);
    } else if (!want || strcmp(want, have))
      snprintf(why, len, "shared object %s is corrupt: its content (%zu bytes, hash %s) does not match its manifest (hash %s)",
               object, bytes, have, want ? want : "none");
  }
  json_decref(m);
}

static int load_entry(const char *entry, mapp_backend backend, stencil_loaded *out) {
  (void)backend;
  char object[1200];
  snprintf(object, sizeof object, "%s/" OBJECT, entry);
  void *h = dlopen(object, RTLD_NOW | RTLD_LOCAL);
  if (!h) return mapp_fail(MAPP_ERR_INPUT, "corrupt shared object %s: %s", object, dlerror());
  const int *nfields = dlsym(h, "stencil_generated_nfields");
  const int *nslots = dlsym(h, "stencil_generated_nslots");
  const int *slot = dlsym(h, "stencil_generated_slot");
  void *step = dlsym(h, "stencil_generated_step");
  if (!nfields || !nslots || !slot || !step) {
    dlclose(h);
    return mapp_fail(MAPP_ERR_INPUT, "shared object %s lacks the generated step's symbols", object);
  }
  *out = (stencil_loaded){.handle = h, .slot = slot, .nslots = *nslots, .nfields = *nfields};
  /* POSIX guarantees a data pointer from dlsym converts to a function pointer */
  memcpy(&out->step, &step, sizeof step);
  snprintf(out->entry, sizeof out->entry, "%s", entry);
  return MAPP_OK;
}

int stencil_cache_get(const char *dir, const stencil_key *key, const char *source, bool may_build, bool load,
                      stencil_loaded *out, stencil_cache_stats *stats) {
  memset(stats, 0, sizeof *stats);
  char entry[1200], why[4096];
  snprintf(entry, sizeof entry, "%s/%s-%s", dir, key->cls, key->key);
  mapp_backend backend = MAPP_BACKEND_SERIAL;
  for (int b = 0; b < MAPP_BACKEND_COUNT; ++b)
    if (!strcmp(mapp_backend_name((mapp_backend)b), key->backend)) backend = (mapp_backend)b;
  struct stat st;
  bool exists = stat(entry, &st) == 0;
  if (!may_build && !exists) {
    nearest_entry(dir, key, why, sizeof why);
    return mapp_fail(MAPP_ERR_INPUT, "%s", why);
  }
  if (exists) check_entry(entry, key, why, sizeof why);
  if (!exists || why[0]) {
    if (!may_build) return mapp_fail(MAPP_ERR_INPUT, "%s", why);
    MAPP_TRY(mkdir_p(dir));
    MAPP_TRY(build_entry(dir, entry, key, source, backend, stats));
    check_entry(entry, key, why, sizeof why);
    if (why[0]) return mapp_fail(MAPP_ERR_INPUT, "%s", why);
  }
  if (!load) return MAPP_OK;
  double t0 = now_s();
  if (backend == MAPP_BACKEND_CUDA && mapp_cuda_device_count() == 0)
    return mapp_fail(MAPP_ERR_INPUT, "the cuda program of class %s is built (%s) but this machine has no GPU to run it",
                     key->cls, entry);
  MAPP_TRY(load_entry(entry, backend, out));
  stats->load_s = now_s() - t0;
  return MAPP_OK;
}

void stencil_loaded_close(stencil_loaded *l) {
  if (l->handle) dlclose(l->handle);
  memset(l, 0, sizeof *l);
}
