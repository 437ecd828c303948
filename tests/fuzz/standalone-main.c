/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Runs a libFuzzer target once on each file or folder of files named on the
 * command line, so that corpora serve as regression tests in ordinary builds.
 */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
        FILE *f = fopen(path, "rb");
        if (!f) {
                perror(path);
                return 1;
        }
        size_t cap = 1 << 16, n = 0;
        uint8_t *buf = malloc(cap);
        size_t r;
        while (buf && (r = fread(buf + n, 1, cap - n, f)) > 0) {
                n += r;
                if (n == cap) {
                        uint8_t *nb = realloc(buf, cap *= 2);
                        if (!nb) {
                                free(buf);
                                buf = NULL;
                        }
                        buf = nb;
                }
        }
        fclose(f);
        if (!buf)
                return 1;
        LLVMFuzzerTestOneInput(buf, n);
        free(buf);
        return 0;
}

int main(int argc, char **argv)
{
        int ran = 0, failed = 0;
        for (int i = 1; i < argc; i++) {
                struct stat st;
                if (stat(argv[i], &st) < 0) {
                        perror(argv[i]);
                        failed++;
                        continue;
                }
                if (!S_ISDIR(st.st_mode)) {
                        failed += run_file(argv[i]);
                        ran++;
                        continue;
                }
                DIR *d = opendir(argv[i]);
                struct dirent *de;
                while (d && (de = readdir(d))) {
                        if (de->d_name[0] == '.')
                                continue;
                        char *p = NULL;
                        if (asprintf(&p, "%s/%s", argv[i], de->d_name) < 0)
                                return 1;
                        failed += run_file(p);
                        ran++;
                        free(p);
                }
                if (d)
                        closedir(d);
        }
        printf("1..1\n%s 1 - %d corpus inputs ran\n", failed ? "not ok" : "ok", ran);
        return failed ? 1 : 0;
}
