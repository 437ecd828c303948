/* SPDX-License-Identifier: Apache-2.0 */
#include "cli.h"

int gv_cmd_cuda_check(gv_cli_t *cli, int argc, char **argv)
{
        (void) argc;
        (void) argv;
        return gv_cli_usage_error(cli, "cuda_check" , "not implemented yet");
}
