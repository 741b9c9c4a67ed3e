#include "strv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "mapp_error.h"

static int strv_reserve(strv *v, size_t wanted) {
  if (wanted + 1 <= v->capacity) return MAPP_OK;
  size_t capacity = v->capacity ? v->capacity * 2 : 8;
  while (capacity < wanted + 1) capacity *= 2;
  char **items = realloc(v->items, capacity * sizeof *items);
  if (!items) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory growing a list of %zu strings", wanted);
  v->items = items;
  v->capacity = capacity;
  return MAPP_OK;
}

static int strv_adopt(strv *v, char *owned) {
  if (!owned) return mapp_fail(MAPP_ERR_SYSTEM, "out of memory copying a string");
  int status = strv_reserve(v, v->count + 1);
  if (status != MAPP_OK) {
    free(owned);
    return status;
  }
  v->items[v->count++] = owned;
  v->items[v->count] = NULL;
  return MAPP_OK;
}

int strv_push(strv *v, const char *s) { return strv_adopt(v, strdup(s)); }

int strv_pushf(strv *v, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = str_vprintf(fmt, ap);
  va_end(ap);
  return strv_adopt(v, text);
}

int strv_extend(strv *v, const strv *more) {
  for (size_t i = 0; i < more->count; ++i) MAPP_TRY(strv_push(v, more->items[i]));
  return MAPP_OK;
}

bool strv_contains(const strv *v, const char *s) {
  for (size_t i = 0; i < v->count; ++i)
    if (strcmp(v->items[i], s) == 0) return true;
  return false;
}

char *const *strv_argv(strv *v) {
  if (strv_reserve(v, v->count) != MAPP_OK) return NULL;
  v->items[v->count] = NULL;
  return v->items;
}

/* Joins `count` words produced by `word(i)` (each malloc'd) with sep. */
static char *join_words(const strv *v, const char *sep, char *(*word)(const char *)) {
  size_t total = 1, seplen = strlen(sep);
  char **words = calloc(v->count + 1, sizeof *words);
  bool ok = words != NULL;
  for (size_t i = 0; ok && i < v->count; ++i) {
    words[i] = word(v->items[i]);
    ok = words[i] != NULL;
    if (ok) total += strlen(words[i]) + seplen;
  }
  char *out = ok ? malloc(total) : NULL;
  if (out) {
    char *p = out;
    for (size_t i = 0; i < v->count; ++i) {
      if (i) {
        memcpy(p, sep, seplen);
        p += seplen;
      }
      size_t len = strlen(words[i]);
      memcpy(p, words[i], len);
      p += len;
    }
    *p = '\0';
  }
  for (size_t i = 0; words && i < v->count; ++i) free(words[i]);
  free(words);
  return out;
}

static char *copy_word(const char *s) { return strdup(s); }

char *strv_join(const strv *v, const char *sep) { return join_words(v, sep, copy_word); }

char *shell_quote(const char *word) {
  static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                             "@%_-+=:,./";
  if (word[0] != '\0' && strspn(word, safe) == strlen(word)) return strdup(word);
  /* Single quotes keep everything literal; an embedded ' becomes '\''. */
  size_t quotes = 0;
  for (const char *p = word; *p; ++p) quotes += *p == '\'';
  char *out = malloc(strlen(word) + 3 * quotes + 3);
  if (!out) return NULL;
  char *q = out;
  *q++ = '\'';
  for (const char *p = word; *p; ++p) {
    if (*p == '\'') {
      memcpy(q, "'\\''", 4);
      q += 4;
    } else {
      *q++ = *p;
    }
  }
  *q++ = '\'';
  *q = '\0';
  return out;
}

char *strv_join_shell(const strv *v) { return join_words(v, " ", shell_quote); }

void strv_free(strv *v) {
  for (size_t i = 0; i < v->count; ++i) free(v->items[i]);
  free(v->items);
  *v = (strv){0};
}

int strv_write_lines(const strv *v, const char *path) {
  char *text = strv_join(v, "\n");
  char *lines = text ? str_printf("%s%s", text, v->count ? "\n" : "") : NULL;
  int status = lines ? write_text_file(path, lines) : mapp_fail(MAPP_ERR_SYSTEM, "out of memory");
  free(lines);
  free(text);
  return status;
}
