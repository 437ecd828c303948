/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The runtime state of a mock node (mock-state.h): setting, parsing and
 * writing the state file that `mock set` keeps beside the profile.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "mock/nvml/mock-state.h"

/* The bits of nvmlClocksEventReason* that NVML defines (nvml-abi.h GV_NVML_CLOCKS_EVENT_REASONS_SUPPORTED). */
#define REASONS_MASK 0x1FFULL
/* Linux's highest pid (PID_MAX_LIMIT on 64-bit). */
#define PID_LIMIT 4194304ULL

bool gv_mock_gpu_state_empty(const gv_mock_gpu_state_t *g)
{
        return !g->set && !g->n_processes;
}

/* Decimal digits only (or 0x hex when @hex), at most @max; -EINVAL otherwise. */
static int parse_number(const char *v, unsigned long long max, bool hex, unsigned long long *out)
{
        int base = 10;
        if (hex && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
                v += 2;
                base = 16;
        }
        if (!*v)
                return -EINVAL;
        unsigned long long x = 0;
        for (const char *p = v; *p; p++) {
                unsigned d;
                if (*p >= '0' && *p <= '9')
                        d = (unsigned) (*p - '0');
                else if (base == 16 && *p >= 'a' && *p <= 'f')
                        d = (unsigned) (*p - 'a' + 10);
                else if (base == 16 && *p >= 'A' && *p <= 'F')
                        d = (unsigned) (*p - 'A' + 10);
                else
                        return -EINVAL;
                if (x > (max - d) / (unsigned long long) base)
                        return -EINVAL;
                x = x * (unsigned long long) base + d;
        }
        *out = x;
        return 0;
}

/* A numeric key: where it goes, its bit and its bound. */
struct number_key {
        const char *key;
        uint32_t bit;
        unsigned long long max;
        bool hex;
        size_t offset;      /* of the field in gv_mock_gpu_state_t */
        bool wide;          /* unsigned long long (else unsigned) */
        unsigned scale;     /* stored value = given x scale (power_usage_w) */
};

#define NK(k, b, m, field, w) { k, b, m, false, offsetof(gv_mock_gpu_state_t, field), w, 1 }
static const struct number_key number_keys[] = {
        NK("temperature_c", GV_MOCK_SET_TEMPERATURE, 200, temperature_c, false),
        NK("utilization_gpu", GV_MOCK_SET_UTIL_GPU, 100, utilization_gpu, false),
        NK("utilization_memory", GV_MOCK_SET_UTIL_MEMORY, 100, utilization_memory, false),
        NK("memory_used_mib", GV_MOCK_SET_MEMORY_USED, 1ULL << 40, memory_used_mib, true),
        NK("power_usage_mw", GV_MOCK_SET_POWER_USAGE, 10000000, power_usage_mw, false),
        { "power_usage_w", GV_MOCK_SET_POWER_USAGE, 10000, false, offsetof(gv_mock_gpu_state_t, power_usage_mw), false, 1000 },
        NK("clock_graphics_mhz", GV_MOCK_SET_CLOCK_GRAPHICS, 100000, clock_graphics_mhz, false),
        NK("clock_sm_mhz", GV_MOCK_SET_CLOCK_SM, 100000, clock_sm_mhz, false),
        { "clock_event_reasons", GV_MOCK_SET_EVENT_REASONS, REASONS_MASK, true,
          offsetof(gv_mock_gpu_state_t, clock_event_reasons), true, 1 },
        NK("ecc_corrected", GV_MOCK_SET_ECC_CORRECTED, 1000000000000ULL, ecc_corrected, true),
        NK("ecc_uncorrected", GV_MOCK_SET_ECC_UNCORRECTED, 1000000000000ULL, ecc_uncorrected, true),
        NK("retired_pages", GV_MOCK_SET_RETIRED_PAGES, 4096, retired_pages, false),
        NK("remapped_rows", GV_MOCK_SET_REMAPPED_ROWS, 4096, remapped_rows, false),
};
#undef NK

static int set_number(gv_mock_gpu_state_t *g, const struct number_key *k, const char *value, gv_error_t **err)
{
        unsigned long long x;
        if (parse_number(value, k->max, k->hex, &x) < 0) {
                if (k->hex)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "%s=%s: expected a mask of nvmlClocksEventReason bits within 0x%llx",
                                            k->key, value, k->max);
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s=%s: expected a whole number 0..%llu", k->key,
                                    value, k->max);
        }
        x *= k->scale;
        char *field = (char *) g + k->offset;
        if (k->wide) {
                unsigned long long w = x;
                memcpy(field, &w, sizeof(w));
        } else {
                unsigned n = (unsigned) x;
                memcpy(field, &n, sizeof(n));
        }
        g->set |= k->bit;
        return 0;
}

static int parse_bool_word(const char *v, const char *yes, const char *no, bool *out)
{
        if (strcmp(v, yes) == 0) {
                *out = true;
                return 0;
        }
        if (strcmp(v, no) == 0) {
                *out = false;
                return 0;
        }
        return -EINVAL;
}

/* "PID:MIB[:NAME]" appended to @g's added processes. */
static int add_process(gv_mock_gpu_state_t *g, const char *value, gv_error_t **err)
{
        const char *c1 = strchr(value, ':');
        const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        char pid_s[16], mib_s[24];
        size_t lp = c1 ? (size_t) (c1 - value) : 0;
        size_t lm = c1 ? (c2 ? (size_t) (c2 - c1 - 1) : strlen(c1 + 1)) : 0;
        const char *name = c2 ? c2 + 1 : "";
        unsigned long long pid, mib;
        if (!c1 || lp == 0 || lp >= sizeof(pid_s) || lm == 0 || lm >= sizeof(mib_s))
                goto bad;
        memcpy(pid_s, value, lp);
        pid_s[lp] = '\0';
        memcpy(mib_s, c1 + 1, lm);
        mib_s[lm] = '\0';
        if (parse_number(pid_s, PID_LIMIT, false, &pid) < 0 || pid == 0 || parse_number(mib_s, 1ULL << 40, false, &mib) < 0)
                goto bad;
        if (strlen(name) > GV_MOCK_STATE_MAX_NAME)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "process=%s: the name is longer than %u bytes",
                                    value, GV_MOCK_STATE_MAX_NAME);
        for (const char *p = name; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "process=%s: the name holds the control character 0x%02x", value,
                                            (unsigned) (unsigned char) *p);
        if (g->n_processes >= GV_MOCK_STATE_MAX_PROCESSES)
                return gv_error_set(err, E2BIG, GV_REASON_CONFIG, "process=%s: at most %u processes can be added to a GPU",
                                    value, GV_MOCK_STATE_MAX_PROCESSES);
        gv_mock_state_process_t *p = &g->processes[g->n_processes++];
        p->pid = (unsigned) pid;
        p->used_memory_mib = mib;
        snprintf(p->name, sizeof(p->name), "%s", name);
        return 0;
bad:
        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                            "process=%s: expected PID:MIB[:NAME] (PID 1..%llu, MIB a whole number)", value, PID_LIMIT);
}

int gv_mock_state_set(gv_mock_state_t *s, unsigned gpu, const char *key, const char *value, gv_error_t **err)
{
        if (gpu >= GV_MOCK_MAX_GPUS)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "GPU %u: expected an index 0..%u", gpu,
                                    GV_MOCK_MAX_GPUS - 1);
        gv_mock_gpu_state_t *g = &s->gpus[gpu];
        for (size_t i = 0; i < GV_ARRAY_SIZE(number_keys); i++)
                if (strcmp(key, number_keys[i].key) == 0)
                        return set_number(g, &number_keys[i], value, err);
        if (strcmp(key, "nvlink") == 0) {
                bool up;
                if (parse_bool_word(value, "up", "down", &up) < 0)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "nvlink=%s: expected up or down", value);
                g->nvlink_down = !up;
                g->set |= GV_MOCK_SET_NVLINK;
                return 0;
        }
        if (strcmp(key, "lost") == 0) {
                bool lost;
                if (parse_bool_word(value, "true", "false", &lost) < 0)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "lost=%s: expected true or false", value);
                g->lost = lost;
                g->set |= GV_MOCK_SET_LOST;
                return 0;
        }
        if (strcmp(key, "processes") == 0) {
                if (strcmp(value, "clear") != 0)
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "processes=%s: expected clear", value);
                g->n_processes = 0;
                g->set |= GV_MOCK_SET_PROCESSES_CLEAR;
                return 0;
        }
        if (strcmp(key, "process") == 0)
                return add_process(g, value, err);
        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                            "%s=%s: unknown key (temperature_c, utilization_gpu, utilization_memory, memory_used_mib, "
                            "power_usage_w, power_usage_mw, clock_graphics_mhz, clock_sm_mhz, clock_event_reasons, "
                            "ecc_corrected, ecc_uncorrected, retired_pages, remapped_rows, nvlink, lost, processes, "
                            "process)",
                            key, value);
}

/* One line "<gpu> <key>=<value>" (NUL-terminated, no newline) into @s. */
static int parse_line(gv_mock_state_t *s, char *line, gv_error_t **err)
{
        char *p = line;
        while (*p == ' ' || *p == '\t')
                p++;
        if (!*p || *p == '#')
                return 0;
        char *sp = strpbrk(p, " \t");
        if (!sp)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "expected \"<gpu> <key>=<value>\"");
        *sp = '\0';
        unsigned long long gpu;
        if (parse_number(p, GV_MOCK_MAX_GPUS - 1, false, &gpu) < 0)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "GPU %s: expected an index 0..%u", p,
                                    GV_MOCK_MAX_GPUS - 1);
        char *kv = sp + 1;
        while (*kv == ' ' || *kv == '\t')
                kv++;
        char *eq = strchr(kv, '=');
        if (!eq || eq == kv)
                return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "expected \"<gpu> <key>=<value>\"");
        *eq = '\0';
        return gv_mock_state_set(s, (unsigned) gpu, kv, eq + 1, err);
}

int gv_mock_state_parse(const char *source, const char *text, size_t len, gv_mock_state_t **out, gv_error_t **err)
{
        if (len > GV_MOCK_STATE_MAX_BYTES)
                return gv_error_set(err, EFBIG, GV_REASON_CONFIG, "%s: larger than %zu bytes", source,
                                    GV_MOCK_STATE_MAX_BYTES);
        _cleanup_free_ gv_mock_state_t *s = calloc(1, sizeof(*s));
        _cleanup_free_ char *copy = malloc(len + 1);
        if (!s || !copy)
                return gv_error_oom(err);
        memcpy(copy, text, len);
        copy[len] = '\0';
        unsigned lineno = 0;
        for (char *line = copy; line && line <= copy + len;) {
                lineno++;
                char *nl = memchr(line, '\n', (size_t) (copy + len - line));
                if (nl)
                        *nl = '\0';
                size_t n = strlen(line);
                if (line + n != (nl ? nl : copy + len)) {
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "%s:%u: holds a NUL byte", source, lineno);
                }
                for (char *c = line; *c; c++)
                        if (((unsigned char) *c < 0x20 && *c != '\t') || *c == 0x7f)
                                return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                                    "%s:%u: holds the control character 0x%02x", source, lineno,
                                                    (unsigned) (unsigned char) *c);
                int r = parse_line(s, line, err);
                if (r < 0) {
                        gv_error_prefix(err, "%s:%u", source, lineno);
                        return r;
                }
                line = nl ? nl + 1 : NULL;
        }
        *out = TAKE_PTR(s);
        return 0;
}

/* The lines of GPU @i of @s on @f. */
static void write_gpu(FILE *f, unsigned i, const gv_mock_gpu_state_t *g)
{
        if (g->set & GV_MOCK_SET_PROCESSES_CLEAR)
                fprintf(f, "%u processes=clear\n", i);
        for (size_t k = 0; k < GV_ARRAY_SIZE(number_keys); k++) {
                const struct number_key *nk = &number_keys[k];
                if (!(g->set & nk->bit) || nk->scale != 1)
                        continue;
                const char *field = (const char *) g + nk->offset;
                unsigned long long x;
                if (nk->wide) {
                        memcpy(&x, field, sizeof(x));
                } else {
                        unsigned n;
                        memcpy(&n, field, sizeof(n));
                        x = n;
                }
                fprintf(f, nk->hex ? "%u %s=0x%llx\n" : "%u %s=%llu\n", i, nk->key, x);
        }
        if (g->set & GV_MOCK_SET_NVLINK)
                fprintf(f, "%u nvlink=%s\n", i, g->nvlink_down ? "down" : "up");
        if (g->set & GV_MOCK_SET_LOST)
                fprintf(f, "%u lost=%s\n", i, g->lost ? "true" : "false");
        for (unsigned k = 0; k < g->n_processes && k < GV_MOCK_STATE_MAX_PROCESSES; k++) {
                const gv_mock_state_process_t *p = &g->processes[k];
                if (p->name[0])
                        fprintf(f, "%u process=%u:%llu:%s\n", i, p->pid, p->used_memory_mib, p->name);
                else
                        fprintf(f, "%u process=%u:%llu\n", i, p->pid, p->used_memory_mib);
        }
}

int gv_mock_state_write(const gv_mock_state_t *s, char **out, gv_error_t **err)
{
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        if (!f)
                return gv_error_oom(err);
        fputs("# gpu-validator mock-nvml runtime state, written by `gpu-validator mock set`\n"
              "# <gpu index> <key>=<value> (docs/mock-nvml.md, Faults: runtime changes)\n",
              f);
        for (unsigned i = 0; i < GV_MOCK_MAX_GPUS; i++)
                if (!gv_mock_gpu_state_empty(&s->gpus[i]))
                        write_gpu(f, i, &s->gpus[i]);
        if (gv_memstream_close(f, &buf) < 0)
                return gv_error_oom(err);
        *out = buf;
        return 0;
}
