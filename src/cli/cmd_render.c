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

#include "base/cleanup.h"
#include "cli.h"
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
}

/* NOLINTNEXTLINE(readability-function-size): option parsing, then render in order; to be split in the architecture refactor */
int gv_cmd_render(gv_cli_t *cli, int argc, char **argv)
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
        const char *prog = cli && cli->prog ? cli->prog : "gpu-validator";
        gv_workload_runtime_t rt = {
                .node_name = gv_env("NODE_NAME"),
                .namespace = gv_env("OPERATOR_NAMESPACE"),
                .image = gv_env("VALIDATOR_IMAGE"),
                .image_pull_policy = gv_env("VALIDATOR_IMAGE_PULL_POLICY"),
                .image_pull_secrets = gv_env("VALIDATOR_IMAGE_PULL_SECRETS"),
                .runtime_class = gv_env("VALIDATOR_RUNTIME_CLASS"),
                .gpu_resource = "nvidia.com/gpu",
                .placeholders = true,
        };
        const char *template_path = gv_env("WORKLOAD_TEMPLATE");
        const char *tolerations_text = NULL;
        bool json_out = false, no_fill = false;
        int c;

        while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
                switch (c) {
                case 'f':
                        template_path = optarg;
                        break;
                case OPT_NODE_NAME:
                        rt.node_name = optarg;
                        break;
                case OPT_NAMESPACE:
                        rt.namespace = optarg;
                        break;
                case OPT_IMAGE:
                        rt.image = optarg;
                        break;
                case OPT_PULL_POLICY:
                        rt.image_pull_policy = optarg;
                        break;
                case OPT_PULL_SECRETS:
                        rt.image_pull_secrets = optarg;
                        break;
                case OPT_RUNTIME_CLASS:
                        rt.runtime_class = optarg;
                        break;
                case OPT_RESOURCE:
                        rt.gpu_resource = optarg;
                        break;
                case OPT_OWNER_NAME:
                        rt.owner_name = optarg;
                        break;
                case OPT_OWNER_UID:
                        rt.owner_uid = optarg;
                        break;
                case OPT_TOLERATIONS:
                        tolerations_text = optarg;
                        break;
                case OPT_STRICT:
                        rt.placeholders = false;
                        break;
                case OPT_NO_FILL:
                        no_fill = true;
                        break;
                case 'o':
                        if (strcmp(optarg, "json") == 0)
                                json_out = true;
                        else if (strcmp(optarg, "yaml") == 0)
                                json_out = false;
                        else
                                return gv_cli_usage_error(cli, "render", "--output=%s: expected yaml or json", optarg);
                        break;
                case 'h':
                        render_help(stdout, prog);
                        return GV_EXIT_OK;
                default:
                        return gv_cli_usage_error(cli, "render", "unknown option");
                }
        }
        if (optind >= argc)
                return gv_cli_usage_error(cli, "render", "which pod? expected cuda or plugin");
        if (optind + 1 < argc)
                return gv_cli_usage_error(cli, "render", "unexpected argument '%s'", argv[optind + 1]);
        gv_workload_kind_t kind;
        if (gv_workload_kind_from_name(argv[optind], &kind) < 0)
                return gv_cli_usage_error(cli, "render", "'%s': expected cuda or plugin", argv[optind]);

        _cleanup_error_ gv_error_t *err = NULL;
        json_object *tolerations = NULL;
        if (tolerations_text) {
                tolerations = json_tokener_parse(tolerations_text);
                if (!json_object_is_type(tolerations, json_type_array)) {
                        json_object_put(tolerations);
                        return gv_cli_usage_error(cli, "render", "--tolerations: expected a JSON list");
                }
                rt.tolerations = tolerations;
        }

        gv_workload_overrides_t *ov = NULL;
        json_object *pod = NULL;
        int r = 0;
        if (template_path)
                r = gv_workload_overrides_load(template_path, &ov, &err);
        if (r >= 0)
                r = no_fill ? gv_workload_template(kind, ov, &pod, &err) : gv_workload_pod(kind, ov, &rt, &pod, &err);
        gv_workload_overrides_free(ov);
        json_object_put(tolerations);
        if (r < 0)
                return gv_cli_fail(cli, "render", &err);

        _cleanup_free_ char *text = NULL;
        if (json_out) {
                const char *s = json_object_to_json_string_ext(
                        pod, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE);
                text = s ? strdup(s) : NULL;
                if (!text)
                        r = gv_error_set(&err, ENOMEM, GV_REASON_INTERNAL, "out of memory");
        } else {
                r = gv_yaml_emit(pod, &text, &err);
        }
        json_object_put(pod);
        if (r < 0)
                return gv_cli_fail(cli, "render", &err);
        fputs(text, stdout);
        if (json_out)
                fputc('\n', stdout);
        if (fflush(stdout) != 0) {
                gv_error_set(&err, errno, GV_REASON_IO, "write to stdout: %s", strerror(errno));
                return gv_cli_fail(cli, "render", &err);
        }
        return GV_EXIT_OK;
}
