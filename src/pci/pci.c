/* SPDX-License-Identifier: Apache-2.0 */
/* The sysfs PCI scan (pci.h): one walk of bus/pci/devices, one rule. */
#include "pci.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/cleanup.h"
#include "base/fileio.h"

/* sysfs attributes are one line; a PCI config space file is 4 KiB at most. */
#define SYSFS_MAX_BYTES 4096

char *gv_sysfs_attr(const char *dir, const char *name)
{
        _cleanup_free_ char *p = gv_path_join(dir, name);
        char *text = NULL;
        if (!p || gv_read_file_at(AT_FDCWD, p, false, SYSFS_MAX_BYTES, &text, NULL, NULL) < 0)
                return NULL;
        size_t l = strlen(text);
        while (l > 0 && (text[l - 1] == '\n' || text[l - 1] == ' ' || text[l - 1] == '\t'))
                text[--l] = '\0';
        return text;
}

/* A hex attribute ("0x10de") into *@out; -1 when unreadable, empty or not a hex number. */
static int read_hex(const char *dir, const char *name, unsigned *out)
{
        _cleanup_free_ char *t = gv_sysfs_attr(dir, name);
        if (!t || !*t)
                return -1;
        char *end = NULL;
        errno = 0;
        unsigned long v = strtoul(t, &end, 16);
        if (errno || *end || t[0] == '-' || v > UINT_MAX)
                return -1;
        *out = (unsigned) v;
        return 0;
}

/* A decimal attribute ("16"); -1 when absent or not a number. */
static long read_dec(const char *dir, const char *name)
{
        _cleanup_free_ char *t = gv_sysfs_attr(dir, name);
        if (!t || !*t)
                return -1;
        char *end = NULL;
        errno = 0;
        long v = strtol(t, &end, 10);
        return errno || *end || v < 0 ? -1 : v;
}

/* Basename of the symlink @dir/@name, heap; NULL when there is no such link. */
static char *link_base(const char *dir, const char *name)
{
        _cleanup_free_ char *p = gv_path_join(dir, name);
        if (!p)
                return NULL;
        char buf[4096];
        ssize_t n = readlink(p, buf, sizeof(buf) - 1);
        if (n <= 0)
                return NULL;
        buf[n] = '\0';
        const char *b = strrchr(buf, '/');
        return strdup(b ? b + 1 : buf);
}

static bool exists(const char *dir, const char *name)
{
        _cleanup_free_ char *p = gv_path_join(dir, name);
        struct stat st;
        return p && stat(p, &st) == 0;
}

/* Number of entries (not . or ..) in @dir/@name; 0 when absent. */
static size_t count_entries(const char *dir, const char *name)
{
        _cleanup_free_ char *p = gv_path_join(dir, name);
        _cleanup_closedir_ DIR *d = p ? opendir(p) : NULL;
        size_t n = 0;
        if (!d)
                return 0;
        for (struct dirent *e; (e = readdir(d));)
                if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                        n++;
        return n;
}

static void pci_fn_clear(gv_pci_fn_t *f)
{
        free(f->address);
        free(f->path);
        free(f->driver);
        free(f->physfn);
        free(f->vgpu_type);
        *f = (gv_pci_fn_t) { 0 };
}

void gv_pci_list_clear(gv_pci_list_t *l)
{
        if (!l)
                return;
        for (size_t i = 0; i < l->n; i++)
                pci_fn_clear(&l->items[i]);
        free(l->items);
        *l = (gv_pci_list_t) { 0 };
}

static int cmp_fn(const void *a, const void *b)
{
        return strcmp(((const gv_pci_fn_t *) a)->address, ((const gv_pci_fn_t *) b)->address);
}

/* Fill the details of @f from its device folder; the address and path are set. */
static int pci_fn_read(const char *sysfs, gv_pci_fn_t *f, gv_error_t **err)
{
        unsigned device = 0;
        (void) read_hex(f->path, "device", &device);
        f->device = device & 0xffff;
        f->driver = link_base(f->path, "driver");
        f->physfn = link_base(f->path, "physfn");
        f->sriov_numvfs = read_dec(f->path, "sriov_numvfs");
        f->sriov_totalvfs = read_dec(f->path, "sriov_totalvfs");
        f->mdev_types = count_entries(f->path, "mdev_supported_types");
        _cleanup_free_ char *bus = gv_path_join(sysfs, "class/mdev_bus");
        if (!bus)
                return gv_error_oom(err);
        f->mdev_parent = f->mdev_types > 0 || exists(bus, f->address);
        char *t = gv_sysfs_attr(f->path, "nvidia/current_vgpu_type");
        if (t && *t && strcmp(t, "0") != 0)
                f->vgpu_type = t;
        else
                free(t);
        return 0;
}

/* Whether the 24-bit @class is a VGA or 3D display controller, whatever its programming interface. */
static bool is_display(unsigned class)
{
        unsigned base_sub = (class >> 8) & 0xffffU;
        return base_sub == GV_PCI_CLASS_DISPLAY_VGA || base_sub == GV_PCI_CLASS_DISPLAY_3D;
}

/* Read the entry @name of @devs into a new element of @l when it is of @vendor (and a GPU with GV_PCI_GPUS). */
static int scan_entry(const char *sysfs, const char *devs, const char *name, unsigned vendor, unsigned flags,
                      gv_pci_list_t *l, size_t *cap, gv_error_t **err)
{
        _cleanup_free_ char *path = gv_path_join(devs, name);
        if (!path)
                return gv_error_oom(err);
        unsigned v = 0, class = 0;
        if (read_hex(path, "vendor", &v) < 0) {
                struct stat st;
                if (stat(path, &st) < 0 && errno == ENOENT)
                        return 0; /* the device went away during the scan (or a dangling link) */
                return gv_error_set(err, EIO, GV_REASON_IO, "%s/vendor: unreadable or not a hex number", path);
        }
        if (v != vendor)
                return 0;
        if (read_hex(path, "class", &class) < 0)
                return gv_error_set(err, EIO, GV_REASON_IO, "%s/class: unreadable or not a hex number", path);
        if ((flags & GV_PCI_GPUS) && !is_display(class))
                return 0;
        if (!GV_GREEDY_REALLOC(l->items, *cap, l->n + 1))
                return gv_error_oom(err);
        gv_pci_fn_t *f = &l->items[l->n++];
        *f = (gv_pci_fn_t) { .address = strdup(name), .path = TAKE_PTR(path), .vendor = v, .class = class,
                             .sriov_numvfs = -1, .sriov_totalvfs = -1 };
        if (!f->address)
                return gv_error_oom(err);
        return flags & GV_PCI_DETAILS ? pci_fn_read(sysfs, f, err) : 0;
}

int gv_pci_scan(const char *sysfs_root, unsigned vendor, unsigned flags, gv_pci_list_t *out, gv_error_t **err)
{
        const char *sysfs = sysfs_root && *sysfs_root ? sysfs_root : "/sys";
        _cleanup_free_ char *devs = gv_path_join(sysfs, "bus/pci/devices");
        if (!devs)
                return gv_error_oom(err);
        _cleanup_closedir_ DIR *d = opendir(devs);
        if (!d) {
                if (errno != ENOENT || !(flags & GV_PCI_NO_BUS_EMPTY))
                        return gv_error_set(err, errno, GV_REASON_IO, "%s: %s", devs, strerror(errno));
                *out = (gv_pci_list_t) { 0 };
                return 0;
        }
        _cleanup_(gv_pci_list_clear) gv_pci_list_t l = { 0 };
        size_t cap = 0;
        struct dirent *e;
        while ((errno = 0, e = readdir(d))) {
                if (e->d_name[0] == '.')
                        continue;
                int r = scan_entry(sysfs, devs, e->d_name, vendor, flags, &l, &cap, err);
                if (r < 0)
                        return r;
        }
        if (errno)
                return gv_error_set(err, errno, GV_REASON_IO, "%s: %s", devs, strerror(errno));
        if (l.n > 1)
                qsort(l.items, l.n, sizeof(*l.items), cmp_fn);
        *out = l;
        l = (gv_pci_list_t) { 0 };
        return 0;
}

int gv_pci_list_gpus(const char *sysfs_root, gv_pci_list_t *out, gv_error_t **err)
{
        return gv_pci_scan(sysfs_root, GV_PCI_VENDOR_NVIDIA, GV_PCI_GPUS | GV_PCI_DETAILS | GV_PCI_NO_BUS_EMPTY, out, err);
}

int gv_pci_count_gpus(const char *sysfs_root, gv_error_t **err)
{
        _cleanup_(gv_pci_list_clear) gv_pci_list_t l = { 0 };
        int r = gv_pci_scan(sysfs_root, GV_PCI_VENDOR_NVIDIA, GV_PCI_GPUS, &l, err);
        if (r < 0)
                return r;
        return l.n > INT_MAX ? INT_MAX : (int) l.n;
}

size_t gv_pci_count_vendor(const char *sysfs_root, unsigned vendor)
{
        _cleanup_(gv_pci_list_clear) gv_pci_list_t l = { 0 };
        if (gv_pci_scan(sysfs_root, vendor, 0, &l, NULL) < 0)
                return 0;
        return l.n;
}
