/* SPDX-License-Identifier: Apache-2.0 */
/* Test helper: writes cuda-check's embedded PTX (gv_cudacheck_ptx) to stdout, for ptxas (check-ptxas.sh). */
#include <stdio.h>

#include "cudacheck/cudacheck.h"

int main(void)
{
        return fputs(gv_cudacheck_ptx, stdout) == EOF ? 1 : 0;
}
