/* The machine's state (mapp_machine.h). */
#define _GNU_SOURCE
#include "mapp_machine.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* The first line of a small file, without its newline; NULL when absent. */
static char *read_line(const char *path, char *buf, size_t len) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  char *line = fgets(buf, (int)len, f);
  fclose(f);
  if (!line) return NULL;
  line[strcspn(line, "\n")] = '\0';
  return line;
}

static json_t *string_or_null(const char *s) { return s ? json_string(s) : json_null(); }

/* "key : value" of /proc/cpuinfo's first processor. */
static char *cpuinfo_field(const char *key, char *buf, size_t len) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return NULL;
  char line[4096], *found = NULL;
  size_t klen = strlen(key);
  while (!found && fgets(line, sizeof line, f)) {
    if (strncmp(line, key, klen) != 0 || (line[klen] != ' ' && line[klen] != '\t' && line[klen] != ':')) continue;
    const char *colon = strchr(line, ':');
    if (!colon) continue;
    colon += strspn(colon + 1, " \t") + 1;
    snprintf(buf, len, "%s", colon);
    buf[strcspn(buf, "\n")] = '\0';
    found = buf;
  }
  fclose(f);
  return found;
}

/* "always [madvise] never": the word in brackets. */
static char *bracketed(char *text) {
  char *open = text ? strchr(text, '[') : NULL, *close = open ? strchr(open, ']') : NULL;
  if (!close) return text;
  *close = '\0';
  return open + 1;
}

/* The clock of CPU 0 in MHz: cpufreq's current frequency, else cpuinfo's. */
static double cpu_mhz(void) {
  char buf[256];
  if (read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", buf, sizeof buf)) return atof(buf) / 1e3;
  return cpuinfo_field("cpu MHz", buf, sizeof buf) ? atof(buf) : 0.0;
}

/* Boost (turbo): cpufreq's boost switch, else intel_pstate's no_turbo; -1 unknown. */
static int boost_state(void) {
  char buf[64];
  if (read_line("/sys/devices/system/cpu/cpufreq/boost", buf, sizeof buf)) return atoi(buf) != 0;
  if (read_line("/sys/devices/system/cpu/intel_pstate/no_turbo", buf, sizeof buf)) return atoi(buf) == 0;
  return -1;
}

/* The hypervisor's signature at CPUID leaf 0x40000000 ("KVMKVMKVM",
 * "Microsoft Hv", "VMwareVMware", "XenVMMXenVMM"); false elsewhere. */
static bool cpuid_hypervisor(char *buf, size_t len) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned int eax, regs[3];
  __cpuid(0x40000000, eax, regs[0], regs[1], regs[2]);
  char sig[13];
  memcpy(sig, regs, 12);
  sig[12] = '\0';
  if (!sig[0]) return false;
  snprintf(buf, len, "%s", sig);
  return true;
#else
  (void)buf, (void)len;
  return false;
#endif
}

/* A guest's hypervisor: Xen names itself; others show the CPU flag and the
 * firmware's vendor (KVM, QEMU, VMware, Microsoft, Amazon EC2). NULL: none. */
static char *hypervisor(char *buf, size_t len) {
  if (read_line("/sys/hypervisor/type", buf, len)) return buf;
  char flags[4096];
  if (!cpuinfo_field("flags", flags, sizeof flags) || !strstr(flags, " hypervisor")) return NULL;
  if (cpuid_hypervisor(buf, len) || (read_line("/sys/class/dmi/id/sys_vendor", buf, len) && buf[0])) return buf;
  snprintf(buf, len, "unknown");
  return buf;
}

static json_t *warnings_of(const char *governor, int boost, const char *hyper, const char *thp) {
  json_t *w = json_array();
  if (!w) return NULL;
  if (governor && strcmp(governor, "performance") != 0)
    json_array_append_new(w, json_sprintf("CPU frequency scaling is on (governor '%s'): the clock moves with load, "
                                          "and real-time figures with it",
                                          governor));
  if (boost == 1)
    json_array_append_new(w, json_string("CPU boost (turbo) is on: the clock depends on load and temperature"));
  if (hyper)
    json_array_append_new(w, json_sprintf("a virtual machine (%s): the hypervisor may steal CPU time; each record "
                                          "says how much it stole while timed",
                                          hyper));
  if (thp && strcmp(thp, "always") == 0)
    json_array_append_new(w, json_string("transparent huge pages 'always': page faults and compaction vary from "
                                         "run to run"));
  return w;
}

json_t *mapp_machine_json(void) {
  char model[256], governor_buf[64], smt_buf[32], hyper_buf[128], thp_buf[128];
  struct utsname uts;
  const char *kernel = uname(&uts) == 0 ? uts.release : NULL;
  char *governor = read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", governor_buf,
                             sizeof governor_buf);
  char *smt = read_line("/sys/devices/system/cpu/smt/active", smt_buf, sizeof smt_buf);
  char *thp = bracketed(read_line("/sys/kernel/mm/transparent_hugepage/enabled", thp_buf, sizeof thp_buf));
  char *hyper = hypervisor(hyper_buf, sizeof hyper_buf);
  int boost = boost_state();
  json_t *warnings = warnings_of(governor, boost, hyper, thp);
  if (!warnings) return NULL;
  return json_pack("{s:o,s:I,s:f,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "cpu_model",
                   string_or_null(cpuinfo_field("model name", model, sizeof model)), "cpus",
                   (json_int_t)sysconf(_SC_NPROCESSORS_ONLN), "mhz", cpu_mhz(), "governor", string_or_null(governor),
                   "boost", boost < 0 ? json_null() : json_boolean(boost), "smt",
                   smt ? json_boolean(atoi(smt) != 0) : json_null(), "hypervisor", string_or_null(hyper), "kernel",
                   string_or_null(kernel), "transparent_hugepages", string_or_null(thp), "warnings", warnings);
}

void mapp_machine_warn(const json_t *machine, const char *prog, FILE *out) {
  size_t i;
  const json_t *w;
  json_array_foreach(json_object_get(machine, "warnings"), i, w) fprintf(out, "%s: warning: %s\n", prog,
                                                                        json_string_value(w));
}
