/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `gpu-validator env` against real shells: values made of
 * the bytes that matter to a shell -- ' " \ $ ` newline, blanks, `export `,
 * '\'' itself, high bytes -- and random bytes, printed by gv_cli_print_env()
 * and sourced by dash and busybox sh (env-roundtrip.h), must come back
 * byte for byte and exported.  Argument: number of random values (default
 * 300); GV_ENV_SEED sets the seed (default 1).  TAP output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env-roundtrip.h"

int main(int argc, char **argv)
{
        static const char *const fixed[] = {
                "", "'", "''", "'\\''", "a'b\nc", "it's\nexport X=1\n", "\n", "\n\n'", "'\n'", "$HOME", "`id`",
                "$(id)", "\\", "\\n", "\"", "a b\tc", "x'\n'y'\\''z", "DRIVER_VERSION='x'", "#comment",
                "\xff\xfe\x80 high", "550.163.01", ";exit 3;", "'; exit 3; '", " leading and trailing ",
        };
        unsigned trials = argc > 1 ? (unsigned) strtoul(argv[1], NULL, 10) : 300;
        const char *seed_env = getenv("GV_ENV_SEED");
        unsigned seed = seed_env ? (unsigned) strtoul(seed_env, NULL, 10) : 1;
        srand(seed);
        printf("1..2\n");
        unsigned ran = 0;
        for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
                ran = rt_check(fixed[i]);
        if (ran == 0) {
                printf("not ok 1 - no shell (dash, busybox) is installed; see tools/setup-debian.sh\n");
                return 1;
        }
        printf("ok 1 - %zu chosen values round-trip through %u shells\n", sizeof(fixed) / sizeof(fixed[0]), ran);
        static const char alphabet[] = "'\"\\$`\n \t;#=export abcXYZ019_-./:@+\r{}()*?[]!&|<>~\x7f\x80\xff";
        char value[512];
        for (unsigned t = 0; t < trials; t++) {
                size_t len = (size_t) rand() % 64;
                for (size_t i = 0; i < len; i++)
                        value[i] = rand() % 4 == 0 ? (char) (1 + rand() % 255)
                                                   : alphabet[(size_t) rand() % (sizeof(alphabet) - 1)];
                value[len] = '\0';
                rt_check(value);
        }
        printf("ok 2 - %u random values (seed %u) round-trip through %u shells\n", trials, seed, ran);
        return 0;
}
