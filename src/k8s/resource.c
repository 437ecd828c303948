/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Typed resource.k8s.io calls (Kubernetes API reference: ResourceSlice
 * v1, v1beta2, v1beta1; Dynamic Resource Allocation).
 */
#include "k8s.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cleanup.h"

static const char *const resource_versions[] = { "v1", "v1beta2", "v1beta1", NULL };

const char *const *gv_k8s_resource_versions(void)
{
        return resource_versions;
}

/* "spec.nodeName=<node>,spec.driver=<driver>" (either part may be absent); heap, NULL when out of memory. */
static char *slice_field_selector(const char *node_name, const char *driver)
{
        bool node = node_name && *node_name, drv = driver && *driver;
        char *fs = NULL;
        if (asprintf(&fs, "%s%s%s%s%s", node ? "spec.nodeName=" : "", node ? node_name : "", node && drv ? "," : "",
                     drv ? "spec.driver=" : "", drv ? driver : "") < 0)
                return NULL;
        return fs;
}

int gv_k8s_resource_slice_list(gv_k8s_client_t *c, const char *node_name, const char *driver, const char **version,
                               json_object **out, gv_error_t **err)
{
        _cleanup_free_ char *fs = slice_field_selector(node_name, driver);
        if (!fs)
                return gv_error_oom(err);
        size_t first = 0;
        if (version && *version)
                for (size_t i = 0; resource_versions[i]; i++)
                        if (strcmp(resource_versions[i], *version) == 0)
                                first = i;
        for (size_t i = first; resource_versions[i]; i++) {
                _cleanup_free_ char *base = NULL;
                if (asprintf(&base, "/apis/resource.k8s.io/%s/resourceslices", resource_versions[i]) < 0)
                        return gv_error_oom(err);
                _cleanup_free_ char *p = gv_k8s_build_path(base, "fieldSelector", *fs ? fs : NULL, NULL);
                if (!p)
                        return gv_error_oom(err);
                gv_error_t *e = NULL;
                int r = gv_k8s_get(c, p, out, &e);
                if (r == 0) {
                        if (version)
                                *version = resource_versions[i];
                        return 0;
                }
                if (r != -ENOENT) {
                        if (err)
                                *err = e;
                        else
                                gv_error_free(&e);
                        return r;
                }
                gv_error_free(&e); /* this version is not served: the next one */
        }
        return gv_error_set(err, ENOENT, GV_REASON_KUBERNETES,
                            "the API server serves no ResourceSlices: GET /apis/resource.k8s.io/{v1,v1beta2,v1beta1}/"
                            "resourceslices all answered 404 Not Found (is Dynamic Resource Allocation enabled on "
                            "this cluster, Kubernetes 1.32 or later?)");
}
