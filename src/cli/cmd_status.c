/* SPDX-License-Identifier: Apache-2.0 */
#include "cli.h"

int gv_cmd_status(gv_cli_t *cli, int argc, char **argv)
{
        (void) argc;
        (void) argv;
        return gv_cli_usage_error(cli, "status" , "not implemented yet");
}
