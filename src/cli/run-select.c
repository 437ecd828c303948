/* SPDX-License-Identifier: Apache-2.0 */
/* `run`'s component selection: the named components in chain order, and their followers. */
#include "run-internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/cleanup.h"
#include "base/fileio.h"

/* The error for an unknown component @name, listing the ones this build knows. */
static int unknown_component(const char *name, gv_error_t **err)
{
        const gv_component_t *const *all = gv_components_all();
        _cleanup_free_ char *known = NULL;
        size_t klen = 0;
        FILE *k = open_memstream(&known, &klen);
        for (size_t i = 0; k && all[i]; i++)
                fprintf(k, "%s%s", i ? ", " : "", all[i]->name);
        (void) gv_memstream_close(k, &known);
        return gv_error_set(err, EINVAL, GV_REASON_CONFIG, "unknown component '%s' (this build validates: %s)", name,
                            known ? known : "?");
}

int gv_run_select(char **names, const char *const *assumed, const gv_component_t **out, size_t cap,
                  size_t *n_out, gv_error_t **err)
{
        static const char *const default_names[] = { "driver", "toolkit", "cuda", "plugin", NULL };
        const gv_component_t *const *all = gv_components_all();
        size_t n = 0;
        for (char **name = names; name && *name; name++)
                if (!gv_component_find(*name))
                        return unknown_component(*name, err);
        for (const char *const *a = assumed; a && *a; a++)
                if (!gv_component_find(*a))
                        return gv_error_set(err, EINVAL, GV_REASON_CONFIG,
                                            "--assume-ready / ASSUME_READY: unknown component '%s'", *a);
        if (!names)
                names = (char **) default_names;
        for (size_t i = 0; all[i]; i++) {
                bool wanted = false;
                for (char **name = names; name && *name && !wanted; name++)
                        wanted = strcmp(*name, all[i]->name) == 0;
                if (!wanted)
                        continue;
                if (n >= cap)
                        return gv_error_set(err, E2BIG, GV_REASON_INTERNAL,
                                            "more than %zu components selected; this build cannot run them", cap);
                out[n++] = all[i];
        }
        *n_out = n;
        return 0;
}

bool gv_run_is_follower(const gv_component_t *c, const gv_component_t *const *selected, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (selected[i] == c)
                        return false;
        return true;
}

size_t gv_run_order(const gv_component_t *const *selected, size_t n, const gv_component_t **out, size_t cap)
{
        size_t k = 0;
        for (size_t i = 0; i < n && k < cap; i++) {
                out[k++] = selected[i];
                for (const gv_component_t *const *f = gv_component_followers(selected[i]); *f && k < cap; f++)
                        if (gv_run_is_follower(*f, selected, n))
                                out[k++] = *f;
        }
        return k;
}
