/* Files and paths: the small POSIX chores every verb needs, each reporting
 * failures through mapp_fail with the path it failed on. */
#ifndef HARNESS_FSUTIL_H
#define HARNESS_FSUTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* "dir/name" (malloc'd); NULL when out of memory. */
char *path_join(const char *dir, const char *name);
/* printf into a malloc'd string; NULL when out of memory. */
char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *str_vprintf(const char *fmt, va_list ap);
bool path_exists(const char *path);
bool path_is_dir(const char *path);
/* An executable `name` in one of $PATH's folders. */
bool program_on_path(const char *name);
/* Modification time, or 0 when the path does not exist. */
time_t path_mtime(const char *path);
/* mkdir -p. */
int make_dirs(const char *path);
/* The whole file as a NUL-terminated string (malloc'd); input error if unreadable. */
int read_text_file(const char *path, char **text);
/* Write text to path through a temporary file and rename, so readers never
 * see half a file. */
int write_text_file(const char *path, const char *text);
/* Copy a text file (through a temporary and rename). */
int copy_text_file(const char *from, const char *to);
/* The directory part of path (malloc'd), "." when it has none. */
char *path_dirname(const char *path);
/* The last component of path without the extension `ext` when it ends so. */
char *path_stem(const char *path, const char *ext);
/* An absolute version of path (relative ones against the working directory). */
char *path_absolute(const char *path);

/* An exclusive lock on a folder (flock on DIR/.lock, which records the
 * holder's pid and verb), held until dir_unlock or the process ends; the
 * kernel drops it when the holder dies, so a killed sweep never leaves it
 * stuck. A folder another process holds is an input error naming that
 * process's pid: two sweeps into one results folder would delete each
 * other's answers. *fd is -1 when nothing is held. */
int dir_lock(const char *dir, const char *verb, int *fd);
void dir_unlock(int *fd);

#endif
