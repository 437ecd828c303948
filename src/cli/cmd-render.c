/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `gpu-validator render cuda|plugin`: print the final validation pod (the
 * default template, the user's override file, the run-time values) as
 * YAML or JSON, exactly as the cuda / plugin component would create it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/cleanup-json.h"
#include "base/cleanup.h"
#include "cli.h"
#include "options.h"
#include "workload/workload.h"

enum {
        OPT_NODE_NAME = 0x100,
        OPT_NAMESPACE,
        OPT_IMAGE,
        OPT_PULL_POLICY,
        OPT_PULL_SECRETS,
        OPT_RUNTIME_CLASS,
        OPT_RESOURCE,
        OPT_OWNER_NAME,
        OPT_OWNER_UID,
        OPT_TOLERATIONS,
        OPT_STRICT,
        OPT_NO_FILL,
};

static void render_help(FILE *f, const char *prog)
{
        fprintf(f,
                "Usage: %s render cuda|plugin [OPTIONS]\n"
                "\n"
                "Print the validation pod the cuda or plugin component creates: the compiled-in\n"
                "default template, the override file merged in, the run-time values filled in.\n"
                "See docs/workload-templates.md.\n"
                "\n"
                "Options (environment variable in brackets; the flag wins):\n"
                "  -f, --workload-template FILE  override file, YAML or JSON [WORKLOAD_TEMPLATE]\n"
                "      --node-name NAME          node to run on [NODE_NAME]\n"
                "      --namespace NS            namespace of the pod [OPERATOR_NAMESPACE]\n"
                "      --image IMAGE             image where the template has none [VALIDATOR_IMAGE]\n"
                "      --image-pull-policy P     Always|IfNotPresent|Never where the template has none\n"
                "                                [VALIDATOR_IMAGE_PULL_POLICY]\n"
                "      --image-pull-secrets LIST comma list of Secret names where the template has none\n"
                "                                [VALIDATOR_IMAGE_PULL_SECRETS]\n"
                "      --runtime-class NAME      runtimeClassName where the template has none\n"
                "                                [VALIDATOR_RUNTIME_CLASS]\n"
                "      --resource NAME           GPU resource the plugin pod requests (nvidia.com/gpu)\n"
                "      --owner-name NAME, --owner-uid UID\n"
                "                                the validator pod that owns the workload pod\n"
                "      --tolerations JSON        the validator pod's tolerations (a JSON list), added\n"
                "      --strict                  a missing node name, namespace or image is an error\n"
                "                                (default: placeholders such as <node-name>)\n"
                "      --no-fill                 print the template before the run-time values\n"
                "  -o, --output yaml|json        output format (yaml)\n"
                "  -h, --help                    show this help\n"
                "\n"
                "Exit codes: 0 printed, 2 bad option or bad override file (file:line: field: problem\n"
                "on stderr, nothing on stdout).\n",
                prog);
        gv_cli_help_tail(f, (const char *const[]) {
                "gpu-validator render cuda",
                "the cuda validation pod as it would be created, with placeholders",
                "gpu-validator render plugin --workload-template overrides.yaml --node-name n1 --namespace gpu-operator",
                "the plugin pod with your overrides, filled for node n1",
                NULL });
}

/* What `render` was asked for. */
typedef struct render_args {
        gv_workload_runtime_t rt;
        const char *template_path;
        const char *tolerations_text;
        bool json_out, no_fill;
        gv_workload_kind_t kind;
} render_args_t;

/* The run-time value that option @opt sets in @rt, or NULL when @opt sets none. */
static const char **runtime_field(gv_workload_runtime_t *rt, int opt)
{
        switch (opt) {
        case OPT_NODE_NAME:
                return &rt->node_name;
        case OPT_NAMESPACE:
                return &rt->namespace;
        case OPT_IMAGE:
                return &rt->image;
        case OPT_PULL_POLICY:
                return &rt->image_pull_policy;
        case OPT_PULL_SECRETS:
                return &rt->image_pull_secrets;
        case OPT_RUNTIME_CLASS:
                return &rt->runtime_class;
        case OPT_RESOURCE:
                return &rt->gpu_resource;
        case OPT_OWNER_NAME:
                return &rt->owner_name;
        case OPT_OWNER_UID:
                return &rt->owner_uid;
        default:
                return NULL;
        }
}

/* Applies option @c (with optarg) to @a; 0, or a negative errno with the exit code in *code. */
static int render_option(gv_cli_t *cli, int c, render_args_t *a, int *code)
{
        const char **field = runtime_field(&a->rt, c);
        if (field) {
                *field = optarg;
                return 0;
        }
        switch (c) {
        case 'f':
                a->template_path = optarg;
                return 0;
        case OPT_TOLERATIONS:
                a->tolerations_text = optarg;
                return 0;
        case OPT_STRICT:
                a->rt.placeholders = false;
                return 0;
        case OPT_NO_FILL:
                a->no_fill = true;
                return 0;
        case 'o':
                if (strcmp(optarg, "json") == 0 || strcmp(optarg, "yaml") == 0) {
                        a->json_out = strcmp(optarg, "json") == 0;
                        return 0;
                }
                *code = gv_cli_usage_error(cli, "render", "--output=%s: expected yaml or json", optarg);
                return -EINVAL;
        case 'h':
                render_help(stdout, cli && cli->prog ? cli->prog : "gpu-validator");
                *code = GV_EXIT_OK;
                return -ECANCELED;
        default:
                *code = gv_cli_usage_error(cli, "render", "unknown option");
                return -EINVAL;
        }
}

/*
 * Fills @a from the environment and argv.  0 to go on, or a negative errno
 * (-ECANCELED after --help) with the exit code in *code.
 */
static int render_parse(gv_cli_t *cli, int argc, char **argv, render_args_t *a, int *code)
{
        static const struct option opts[] = {
                { "workload-template", required_argument, NULL, 'f' },
                { "node-name", required_argument, NULL, OPT_NODE_NAME },
                { "namespace", required_argument, NULL, OPT_NAMESPACE },
                { "image", required_argument, NULL, OPT_IMAGE },
                { "image-pull-policy", required_argument, NULL, OPT_PULL_POLICY },
                { "image-pull-secrets", required_argument, NULL, OPT_PULL_SECRETS },
                { "runtime-class", required_argument, NULL, OPT_RUNTIME_CLASS },
                { "resource", required_argument, NULL, OPT_RESOURCE },
                { "owner-name", required_argument, NULL, OPT_OWNER_NAME },
                { "owner-uid", required_argument, NULL, OPT_OWNER_UID },
                { "tolerations", required_argument, NULL, OPT_TOLERATIONS },
                { "strict", no_argument, NULL, OPT_STRICT },
                { "no-fill", no_argument, NULL, OPT_NO_FILL },
                { "output", required_argument, NULL, 'o' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        *a = (render_args_t) {
                .rt = {
                        .node_name = gv_env("NODE_NAME"),
                        .namespace = gv_env("OPERATOR_NAMESPACE"),
                        .image = gv_env("VALIDATOR_IMAGE"),
                        .image_pull_policy = gv_env("VALIDATOR_IMAGE_PULL_POLICY"),
                        .image_pull_secrets = gv_env("VALIDATOR_IMAGE_PULL_SECRETS"),
                        .runtime_class = gv_env("VALIDATOR_RUNTIME_CLASS"),
                        .gpu_resource = "nvidia.com/gpu",
                        .placeholders = true,
                },
                .template_path = gv_env("WORKLOAD_TEMPLATE"),
        };
        int c, r;
        while ((c = gv_cli_getopt(cli, "render", argc, argv, "f:o:h", opts, code)) != -1) {
                if (c == GV_GETOPT_STOP)
                        return -EINVAL;
                if ((r = render_option(cli, c, a, code)) < 0)
                        return r;
        }
        if (optind >= argc)
                *code = gv_cli_usage_error(cli, "render", "which pod? expected cuda or plugin");
        else if (optind + 1 < argc)
                *code = gv_cli_usage_error(cli, "render", "unexpected argument '%s'", argv[optind + 1]);
        else if (gv_workload_kind_from_name(argv[optind], &a->kind) < 0)
                *code = gv_cli_usage_error(cli, "render", "'%s': expected cuda or plugin", argv[optind]);
        else
                return 0;
        return -EINVAL;
}

/* Prints @pod as YAML or (@json_out) JSON on stdout; errors as gv_yaml_emit(), GV_REASON_IO for stdout. */
static int render_print(json_object *pod, bool json_out, gv_error_t **err)
{
        _cleanup_free_ char *text = NULL;
        if (json_out) {
                const char *s = json_object_to_json_string_ext(
                        pod, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
                text = s ? strdup(s) : NULL;
                if (!text)
                        return gv_error_oom(err);
        } else {
                int r = gv_yaml_emit(pod, &text, err);
                if (r < 0)
                        return r;
        }
        fputs(text, stdout);
        if (json_out)
                fputc('\n', stdout);
        if (fflush(stdout) != 0)
                return gv_error_set(err, errno, GV_REASON_IO, "write to stdout: %s", strerror(errno));
        return 0;
}

int gv_cmd_render(gv_cli_t *cli, int argc, char **argv)
{
        render_args_t a;
        int code = GV_EXIT_OK;
        if (render_parse(cli, argc, argv, &a, &code) < 0)
                return code;

        _cleanup_error_ gv_error_t *err = NULL;
        _cleanup_json_ json_object *tolerations = NULL;
        if (a.tolerations_text) {
                tolerations = json_tokener_parse(a.tolerations_text);
                if (!json_object_is_type(tolerations, json_type_array))
                        return gv_cli_usage_error(cli, "render", "--tolerations: expected a JSON list");
                a.rt.tolerations = tolerations;
        }

        gv_workload_overrides_t *ov = NULL;
        _cleanup_json_ json_object *pod = NULL;
        int r = 0;
        if (a.template_path)
                r = gv_workload_overrides_load(a.template_path, &ov, &err);
        if (r >= 0)
                r = a.no_fill ? gv_workload_template(a.kind, ov, &pod, &err)
                              : gv_workload_pod(a.kind, ov, &a.rt, &pod, &err);
        gv_workload_overrides_free(ov);
        if (r >= 0)
                r = render_print(pod, a.json_out, &err);
        return r < 0 ? gv_cli_fail(cli, "render", &err) : GV_EXIT_OK;
}
