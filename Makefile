# Convenience targets; the build itself is Meson (tools/build.sh) and tests are tools/test-all.sh.
.PHONY: build test image image-smoke image-rootfs

BUILD_DIR ?= build
IMAGE_ROOTFS ?= $(BUILD_DIR)/image-rootfs

build:
	./tools/build.sh

test:
	./tools/test-all.sh

# The container image (podman): localhost/gpu-validator:<version> and build/image/*.tar.
image:
	./tools/image.sh build

image-smoke:
	./tools/image.sh smoke

# The container image's file tree in a folder, without a container engine (what deploy/Dockerfile collects).
image-rootfs: build
	rm -rf $(IMAGE_ROOTFS)
	./tools/image-rootfs.sh --build-dir $(BUILD_DIR) $(IMAGE_ROOTFS)
