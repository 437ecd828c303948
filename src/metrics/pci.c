/* SPDX-License-Identifier: Apache-2.0 */
/* Counting NVIDIA GPUs in sysfs, without lspci and without touching the GPUs. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/fileio.h"
#include "metrics.h"

#define PCI_VENDOR_NVIDIA 0x10deul
#define PCI_CLASS_VGA 0x0300ul /* display controller, VGA compatible */
#define PCI_CLASS_3D 0x0302ul  /* display controller, 3D (data-centre GPUs) */

/* Read a sysfs hex attribute ("0x10de\n") of the device folder @devfd. */
static int read_hex(int devfd, const char *name, unsigned long *out)
{
        _cleanup_free_ char *text = NULL;
        _cleanup_error_ gv_error_t *e = NULL;
        int r = gv_read_file_at(devfd, name, false, 64, &text, NULL, &e);
        if (r < 0)
                return r;
        char *end = NULL;
        errno = 0;
        unsigned long v = strtoul(text, &end, 16);
        if (errno || end == text)
                return -EINVAL;
        while (*end == '\n' || *end == ' ')
                end++;
        if (*end)
                return -EINVAL;
        *out = v;
        return 0;
}

int gv_metrics_count_pci_gpus(const char *sysfs_root, gv_error_t **err)
{
        _cleanup_free_ char *path = gv_path_join(sysfs_root ? sysfs_root : GV_METRICS_DEFAULT_SYSFS_ROOT,
                                                 "bus/pci/devices");
        if (!path)
                return gv_error_oom(err);

        _cleanup_closedir_ DIR *d = opendir(path);
        if (!d)
                return gv_error_set(err, errno, GV_REASON_IO, "%s: %s", path, strerror(errno));

        int count = 0;
        struct dirent *de;
        while ((errno = 0, de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                /* Entries are symlinks to the device folders; following them is intended. */
                _cleanup_close_ int devfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (devfd < 0)
                        continue;
                unsigned long vendor, class;
                if (read_hex(devfd, "vendor", &vendor) < 0 || vendor != PCI_VENDOR_NVIDIA)
                        continue;
                if (read_hex(devfd, "class", &class) < 0)
                        continue;
                unsigned long base_sub = (class >> 8) & 0xfffful;
                if (base_sub == PCI_CLASS_VGA || base_sub == PCI_CLASS_3D)
                        count++;
        }
        if (errno)
                return gv_error_set(err, errno, GV_REASON_IO, "%s: %s", path, strerror(errno));
        return count;
}
