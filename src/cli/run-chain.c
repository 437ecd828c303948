/* SPDX-License-Identifier: Apache-2.0 */
/* `run` itself: validate in order, one report line per result, then the total. */
#include "run-internal.h"

#include "base/clock.h"
#include "base/cleanup.h"

/* The verdict column of a result line. */
static const char *verdict(int r, const gv_run_report_t *rep)
{
        return r < 0            ? "FAILED"
               : rep->skipped   ? "skipped"
               : rep->assumed   ? "assumed"
               : rep->warning   ? "ok (warning)"
                                : "ok";
}

/* The result line of @c (and its warning, and on failure the reason's hint) on @out. */
static void report(const gv_component_t *c, int r, const gv_run_report_t *rep, FILE *out)
{
        fprintf(out, "%-14s %-13s %7.3fs  %s%s%s\n", c->name, verdict(r, rep), rep->duration_s,
                r < 0 ? gv_reason_name(rep->reason) : "", r < 0 ? ": " : "", rep->message ? rep->message : "");
        if (rep->warning)
                fprintf(out, "%-14s %-13s %8s  %s\n", "", "", "", rep->warning);
        if (r < 0) {
                const char *hint = gv_reason_hint(rep->reason);
                if (hint)
                        fprintf(out, "%-14s %-13s %8s  hint: %s\n", "", "", "", hint);
        }
        (void) fflush(out); /* the summary is for people; the markers are the result */
}

int gv_run_chain(const gv_component_t *const *selected, size_t n_selected, const gv_config_t *cfg,
                 gv_store_t *store, FILE *out)
{
        int code = GV_EXIT_OK;
        int64_t t0 = gv_now_ns();
        double sum = 0;
        const gv_component_t *order[64];
        size_t n_order = gv_run_order(selected, n_selected, order, GV_ARRAY_SIZE(order));
        for (size_t i = 0; i < n_order && code == GV_EXIT_OK; i++) {
                gv_run_report_t rep = { 0 };
                int r = gv_component_run(order[i], cfg, store, &rep);
                sum += rep.duration_s;
                report(order[i], r, &rep, out); /* a skipped follower too: it says why it was skipped */
                if (r < 0)
                        code = gv_cli_exit_code_for(rep.reason);
                gv_run_report_clear(&rep);
        }
        /* The components time themselves in whole milliseconds: never show a total below their sum. */
        double total = (double) (gv_now_ns() - t0) / 1e9;
        fprintf(out, "%-14s %-13s %7.3fs\n\n", "total", code == GV_EXIT_OK ? "ok" : "FAILED", total > sum ? total : sum);
        return code;
}
