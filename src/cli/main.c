/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>

#include "gv-version.h"

int main(int argc, char **argv)
{
        (void) argc;
        (void) argv;
        printf("gpu-validator %s\n", GV_VERSION);
        return 0;
}
