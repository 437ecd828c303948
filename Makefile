# Convenience targets; the build itself is Meson (tools/build.sh) and tests are tools/test-all.sh.
.PHONY: build test image image-smoke image-rootfs fuzz static-analysis

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

# Every fuzz target with clang + libFuzzer for FUZZ_SECONDS each (optionally
# stopping at FUZZ_RUNS executions); prints executions, cov: and ft: per target.
FUZZ_SECONDS ?= 60
FUZZ_RUNS ?= -1
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_RUNS=$(FUZZ_RUNS) ./tools/fuzz.sh

# cppcheck and clang-tidy over src/ and mock/ (also part of `make test`).
static-analysis: build
	./tools/static-analysis.sh $(BUILD_DIR)
