/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nvidia-smi mig -lgip | -lgi | -lci | -lcip [-gi LIST]: the real tool's boxed
 * listings over NVML's MIG calls.  Layouts from public captures of the real
 * tool (NVIDIA's MIG user guide, "Getting Started with MIG", and users'
 * transcripts): from driver branch 535 on the GPU instance tables are two
 * columns wider (a Name column of 18, 81 and 59 columns) than before (16; 79
 * and 57); the compute instance tables kept one layout.  "Free" is what the
 * GPU's free memory slices still hold for the profile, from the existing
 * instances' placements (see gi_free()).  See nvidia-smi-internal.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"
#include "mock/smi/nvidia-smi-internal.h"

#define MAX_GI 32
#define MAX_CI 32
#define MIG_SLOTS 8          /* memory slices of a MIG GPU (A100, H100, H200, B200: 8) */
#define MIG_COMPUTE_SLICES 7 /* and its compute slices: no placement reaches past the seventh */

/* Whether GPU @g has MIG mode on now. */
static bool mig_on(const smi_t *s, const gpu_info_t *g)
{
        unsigned cur = 0, pend = 0;
        return !g->lost && g->dev && NV(s->nvml, nvmlDeviceGetMigMode, g->dev, &cur, &pend) == NVML_SUCCESS &&
               cur == NVML_DEVICE_MIG_ENABLE;
}

/* The GPU instance profile at NVML index @p of @dev into *info (v2, with its name); false when the GPU has none. */
static bool gi_profile(const smi_t *s, nvmlDevice_t dev, unsigned p, nvmlGpuInstanceProfileInfo_v2_t *info)
{
        memset(info, 0, sizeof(*info));
        info->version = nvmlGpuInstanceProfileInfo_v2;
        return NVX(s->nvml, nvmlDeviceGetGpuInstanceProfileInfoV, dev, p, info) == NVML_SUCCESS;
}

/* The GPU instance profile of id @id on @dev into *info; false when none has it. */
static bool gi_profile_by_id(const smi_t *s, nvmlDevice_t dev, unsigned id, nvmlGpuInstanceProfileInfo_v2_t *info)
{
        for (unsigned p = 0; p < NVML_GPU_INSTANCE_PROFILE_COUNT; p++)
                if (gi_profile(s, dev, p, info) && info->id == id)
                        return true;
        memset(info, 0, sizeof(*info));
        return false;
}

/* Every GPU instance of @dev (all profiles) into @out (room for MAX_GI) with its info; their number. */
static unsigned all_gis(const smi_t *s, nvmlDevice_t dev, nvmlGpuInstance_t *out, nvmlGpuInstanceInfo_t *infos)
{
        unsigned n = 0;
        for (unsigned p = 0; p < NVML_GPU_INSTANCE_PROFILE_COUNT && n < MAX_GI; p++) {
                nvmlGpuInstanceProfileInfo_v2_t info;
                if (!gi_profile(s, dev, p, &info))
                        continue;
                unsigned cnt = MAX_GI - n;
                if (NVX(s->nvml, nvmlDeviceGetGpuInstances, dev, info.id, out + n, &cnt) != NVML_SUCCESS)
                        continue;
                for (unsigned k = 0; k < cnt; k++)
                        if (NV(s->nvml, nvmlGpuInstanceGetInfo, out[n + k], &infos[n + k]) != NVML_SUCCESS)
                                memset(&infos[n + k], 0, sizeof(infos[n + k]));
                n += cnt;
        }
        return n;
}

/*
 * How many more instances of a profile of @slices slices (at most @total of them) fit in the
 * memory slices the @n existing instances leave free: placements start at multiples of the
 * slice count (a 3-slice profile at 0 and 4) and end within the seven compute slices (1g at
 * 0..6, 2g at 0, 2 and 4), as the MIG user guide's placement tables show.
 */
static unsigned gi_free(const nvmlGpuInstanceInfo_t *gis, unsigned n, unsigned slices, unsigned total,
                        unsigned used)
{
        bool busy[MIG_SLOTS] = { 0 };
        for (unsigned i = 0; i < n; i++)
                for (unsigned k = 0; k < gis[i].placement.size; k++)
                        if (gis[i].placement.start + k < MIG_SLOTS)
                                busy[gis[i].placement.start + k] = true;
        unsigned step = slices == 3 ? 4 : slices ? slices : 1, fit = 0;
        for (unsigned start = 0; start + slices <= MIG_COMPUTE_SLICES; start += step) {
                bool ok = true;
                for (unsigned k = 0; k < slices; k++)
                        ok &= !busy[start + k];
                fit += ok;
        }
        unsigned left = total > used ? total - used : 0;
        return fit < left ? fit : left;
}

/* The name column's width: 18 from driver branch 535 on, else 16. */
static int name_width(const smi_t *s)
{
        unsigned b = smi_driver_branch(s->driver_version);
        return b == 0 || b >= 535 ? 18 : 16;
}

/* A box edge of @inner dashes between '+'. */
static void edge(int inner, char c)
{
        putchar(c == '=' ? '|' : '+');
        for (int i = 0; i < inner; i++)
                putchar(c);
        printf("%c\n", c == '=' ? '|' : '+');
}

/*
 * The box heads, as the real tool writes them with a Name column of 16: in a GPU instance
 * table ('wide') each '~' stands for the columns a wider Name column adds (see name_width()).
 */
static const struct {
        int inner; /* the box's inner width with a Name column of 16 */
        bool wide;
        const char *lines[4];
} heads[] = {
        [NVSMI_MIG_LGIP] = { 77, true,
                             { "| GPU instance profiles:~                                                      |",
                               "| GPU   Name~             ID    Instances   Memory     P2P    SM    DEC   ENC  |",
                               "|~                              Free/Total   GiB              CE    JPEG  OFA  |" } },
        [NVSMI_MIG_LGI] = { 55, true,
                            { "| GPU instances:~                                        |",
                              "| GPU   Name~             Profile  Instance   Placement  |",
                              "|~                          ID       ID       Start:Size |" } },
        [NVSMI_MIG_LCI] = { 68, false,
                            { "| Compute instances:                                                 |",
                              "| GPU     GPU       Name             Profile   Instance   Placement  |",
                              "|       Instance                       ID        ID       Start:Size |",
                              "|         ID                                                         |" } },
        [NVSMI_MIG_LCIP] = { 86, false,
                             { "| Compute instance profiles:                                                           |",
                               "| GPU     GPU       Name             Profile  Instances   Exclusive       Shared       |",
                               "|       Instance                       ID     Free/Total     SM       DEC   ENC   OFA  |",
                               "|         ID                                                          CE    JPEG       |" } },
};

static void lgip_rows(const smi_t *s, const gpu_info_t *g, int w)
{
        nvmlGpuInstance_t h[MAX_GI];
        nvmlGpuInstanceInfo_t gis[MAX_GI];
        unsigned n = all_gis(s, g->dev, h, gis);
        nvmlGpuInstanceProfileInfo_v2_t infos[NVML_GPU_INSTANCE_PROFILE_COUNT];
        unsigned order[NVML_GPU_INSTANCE_PROFILE_COUNT], m = 0;
        for (unsigned p = 0; p < NVML_GPU_INSTANCE_PROFILE_COUNT; p++)
                if (gi_profile(s, g->dev, p, &infos[p]))
                        order[m++] = p;
        /* by slice count, then NVML's profile order (1g.10gb, 1g.10gb+me, 1g.20gb, 2g.20gb, ...) */
        for (unsigned i = 1; i < m; i++)
                for (unsigned j = i; j > 0 && infos[order[j]].sliceCount < infos[order[j - 1]].sliceCount; j--) {
                        unsigned t = order[j];
                        order[j] = order[j - 1];
                        order[j - 1] = t;
                }
        for (unsigned i = 0; i < m; i++) {
                const nvmlGpuInstanceProfileInfo_v2_t *p = &infos[order[i]];
                unsigned used = 0;
                for (unsigned k = 0; k < n; k++)
                        used += gis[k].profileId == p->id;
                unsigned free_n = gi_free(gis, n, p->sliceCount, p->instanceCount, used);
                printf("|%4u  %-*s%4u    %2u/%-2u       %-5.2f      %-3s%6u%6u%6u   |\n", g->index, w, p->name, p->id,
                       free_n, p->instanceCount, (double) p->memorySizeMB / 1024.0, p->isP2pSupported ? "Yes" : "No",
                       p->multiprocessorCount, p->decoderCount, p->encoderCount);
                printf("|%*s%6u%6u%6u   |\n", w + 40, "", p->copyEngineCount, p->jpegCount, p->ofaCount);
                edge(heads[NVSMI_MIG_LGIP].inner + w - 16, '-');
        }
}

static void lgi_rows(const smi_t *s, const gpu_info_t *g, int w)
{
        nvmlGpuInstance_t h[MAX_GI];
        nvmlGpuInstanceInfo_t gis[MAX_GI];
        unsigned n = all_gis(s, g->dev, h, gis);
        for (unsigned k = 0; k < n; k++) {
                nvmlGpuInstanceProfileInfo_v2_t info;
                (void) gi_profile_by_id(s, g->dev, gis[k].profileId, &info);
                printf("|%4u  %-*s%6u%9u%11u:%-6u|\n", g->index, w, info.name, gis[k].profileId, gis[k].id,
                       gis[k].placement.start, gis[k].placement.size);
                edge(heads[NVSMI_MIG_LGI].inner + w - 16, '-');
        }
}

/* The compute instance profile at NVML index @p of GPU instance @gi (v2, with its name); false when none. */
static bool ci_profile(const smi_t *s, nvmlGpuInstance_t gi, unsigned p, nvmlComputeInstanceProfileInfo_v2_t *info)
{
        memset(info, 0, sizeof(*info));
        info->version = nvmlComputeInstanceProfileInfo_v2;
        return NVX(s->nvml, nvmlGpuInstanceGetComputeInstanceProfileInfoV, gi, p,
                   NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, info) == NVML_SUCCESS;
}

/* Whether GPU instance id @id is in the -gi list @gi (NULL: every one). */
static bool gi_selected(const char *gi, unsigned id)
{
        for (const char *p = gi; p;) {
                _cleanup_free_ char *tok = NULL;
                if (smi_next_token(&p, &tok) < 0)
                        return false;
                if (strtoul(tok, NULL, 10) == id)
                        return true;
        }
        return !gi;
}

/*
 * Which of GPU instance @gi's @slices compute slices its compute instances (of every profile)
 * hold, into @busy (room for MIG_SLOTS).
 */
static void ci_busy(const smi_t *s, nvmlGpuInstance_t gi, bool *busy)
{
        for (unsigned p = 0; p < NVML_COMPUTE_INSTANCE_PROFILE_COUNT; p++) {
                nvmlComputeInstanceProfileInfo_v2_t info;
                if (!ci_profile(s, gi, p, &info))
                        continue;
                nvmlComputeInstance_t cis[MAX_CI];
                unsigned cnt = MAX_CI;
                if (NVX(s->nvml, nvmlGpuInstanceGetComputeInstances, gi, info.id, cis, &cnt) != NVML_SUCCESS)
                        continue;
                for (unsigned c = 0; c < cnt; c++) {
                        nvmlComputeInstanceInfo_t ci = { 0 };
                        if (NV(s->nvml, nvmlComputeInstanceGetInfo_v2, cis[c], &ci) != NVML_SUCCESS)
                                continue;
                        for (unsigned k = 0; k < ci.placement.size; k++)
                                if (ci.placement.start + k < MIG_SLOTS)
                                        busy[ci.placement.start + k] = true;
                }
        }
}

/*
 * How many more compute instances of @info (@used of them exist) fit in the compute slices
 * of a GPU instance of @slices slices that @busy leaves free (placements at multiples of the
 * profile's slice count).
 */
static unsigned ci_free(const nvmlComputeInstanceProfileInfo_v2_t *info, unsigned used, unsigned slices,
                        const bool *busy)
{
        unsigned size = info->sliceCount ? info->sliceCount : 1, fit = 0;
        for (unsigned start = 0; start + size <= slices && start + size <= MIG_SLOTS; start += size) {
                bool ok = true;
                for (unsigned k = 0; k < size; k++)
                        ok &= !busy[start + k];
                fit += ok;
        }
        unsigned left = info->instanceCount > used ? info->instanceCount - used : 0;
        return fit < left ? fit : left;
}

/* -lci (@profiles false) or -lcip rows of every selected GPU instance of @g. */
static void ci_rows(const smi_t *s, const gpu_info_t *g, const char *gi_list, bool profiles)
{
        nvmlGpuInstance_t h[MAX_GI];
        nvmlGpuInstanceInfo_t gis[MAX_GI];
        unsigned n = all_gis(s, g->dev, h, gis);
        for (unsigned k = 0; k < n; k++) {
                if (!gi_selected(gi_list, gis[k].id))
                        continue;
                nvmlGpuInstanceProfileInfo_v2_t gip;
                bool busy[MIG_SLOTS] = { 0 };
                if (profiles) {
                        (void) gi_profile_by_id(s, g->dev, gis[k].profileId, &gip);
                        ci_busy(s, h[k], busy);
                }
                for (unsigned p = 0; p < NVML_COMPUTE_INSTANCE_PROFILE_COUNT; p++) {
                        nvmlComputeInstanceProfileInfo_v2_t info;
                        if (!ci_profile(s, h[k], p, &info))
                                continue;
                        nvmlComputeInstance_t cis[MAX_CI];
                        unsigned cnt = MAX_CI;
                        if (NVX(s->nvml, nvmlGpuInstanceGetComputeInstances, h[k], info.id, cis, &cnt) != NVML_SUCCESS)
                                cnt = 0;
                        if (profiles) {
                                bool whole = info.sliceCount == gip.sliceCount; /* the GI's own: the default ("*") */
                                printf("|%4u%7u       %-19s%3u%c%6u/%-2u%12u%9u%6u%6u   |\n", g->index, gis[k].id,
                                       info.name, info.id, whole ? '*' : ' ', ci_free(&info, cnt, gip.sliceCount, busy),
                                       info.instanceCount, info.multiprocessorCount, info.sharedDecoderCount,
                                       info.sharedEncoderCount, info.sharedOfaCount);
                                printf("|%71u%6u         |\n", info.sharedCopyEngineCount, info.sharedJpegCount);
                                edge(heads[NVSMI_MIG_LCIP].inner, '-');
                                continue;
                        }
                        for (unsigned c = 0; c < cnt; c++) {
                                nvmlComputeInstanceInfo_t ci = { 0 };
                                if (NV(s->nvml, nvmlComputeInstanceGetInfo_v2, cis[c], &ci) != NVML_SUCCESS)
                                        continue;
                                printf("|%4u%7u       %-19s%3u%10u%11u:%-6u|\n", g->index, gis[k].id, info.name, info.id,
                                       ci.id, ci.placement.start, ci.placement.size);
                                edge(heads[NVSMI_MIG_LCI].inner, '-');
                        }
                }
        }
}

/* The box head of @list, @w the GPU instance tables' name width. */
static void head(nvsmi_mig_list_t list, int w)
{
        int extra = heads[list].wide ? w - 16 : 0;
        edge(heads[list].inner + extra, '-');
        for (size_t i = 0; i < GV_ARRAY_SIZE(heads[list].lines) && heads[list].lines[i]; i++) {
                for (const char *c = heads[list].lines[i]; *c; c++)
                        if (*c == '~')
                                printf("%*s", extra, "");
                        else
                                putchar(*c);
                putchar('\n');
        }
        edge(heads[list].inner + extra, '=');
}

int nvsmi_view_mig(smi_t *s, nvsmi_mig_list_t list, const char *gi)
{
        bool any = false;
        for (size_t i = 0; i < s->n; i++)
                any |= mig_on(s, &s->gpus[i]);
        if (!any) {
                printf("No MIG-enabled devices found.\n");
                return SMI_EXIT_NOT_FOUND;
        }
        int w = name_width(s);
        head(list, w);
        for (size_t i = 0; i < s->n; i++) {
                const gpu_info_t *g = &s->gpus[i];
                if (!mig_on(s, g))
                        continue;
                if (list == NVSMI_MIG_LGIP)
                        lgip_rows(s, g, w);
                else if (list == NVSMI_MIG_LGI)
                        lgi_rows(s, g, w);
                else
                        ci_rows(s, g, gi, list == NVSMI_MIG_LCIP);
        }
        return s->exit_code;
}
