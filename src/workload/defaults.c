/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The compiled-in default templates of the validation pods.  They follow
 * upstream's validator/manifests/{cuda,plugin}-workload-validation.yaml
 * (container names, service account, CDI annotation, security contexts,
 * placeholders) with the changes listed in docs/workload-templates.md:
 * sidecar injection off, resources on every container, restartPolicy
 * Never, our own cuda-check program, the pull policy left to the runtime
 * values.  The validator adds the node label, namespace, nodeName, owner
 * and the GPU resource at run time (gv_workload_fill()).
 */
#include "workload.h"

/* What both pods share from the end of the annotations to the init containers. */
#define ANNOTATIONS_TAIL_AND_SPEC_HEAD \
        "    sidecar.istio.io/inject: \"false\"\n" \
        "    linkerd.io/inject: disabled\n" \
        "spec:\n" \
        "  restartPolicy: Never\n" \
        "  serviceAccountName: FILLED_BY_THE_VALIDATOR\n" \
        "  automountServiceAccountToken: false\n" \
        "  tolerations:\n" \
        "  - key: nvidia.com/gpu\n" \
        "    operator: Exists\n" \
        "    effect: NoSchedule\n" \
        "  initContainers:\n"

/* The resources of both init containers (the plugin's adds the GPU limit below them). */
#define INIT_CONTAINER_RESOURCES \
        "    resources:\n" \
        "      requests:\n" \
        "        cpu: 100m\n" \
        "        memory: 128Mi\n" \
        "      limits:\n" \
        "        cpu: \"1\"\n" \
        "        memory: 1Gi\n"

/* What both main containers share from their read-only root file system on. */
#define MAIN_CONTAINER_TAIL \
        "      readOnlyRootFilesystem: true\n" \
        "    resources:\n" \
        "      requests:\n" \
        "        cpu: 10m\n" \
        "        memory: 16Mi\n" \
        "      limits:\n" \
        "        cpu: 100m\n" \
        "        memory: 64Mi\n"

static const char cuda_yaml[] =
        "apiVersion: v1\n"
        "kind: Pod\n"
        "metadata:\n"
        "  generateName: nvidia-cuda-validator-\n"
        "  namespace: FILLED_BY_THE_VALIDATOR\n"
        "  labels:\n"
        "    app: nvidia-cuda-validator\n"
        "    sidecar.istio.io/inject: \"false\"\n"
        "  annotations:\n"
        "    nvidia.cdi.k8s.io/container.cuda-validation: \"management.nvidia.com/gpu=all\"\n"
        ANNOTATIONS_TAIL_AND_SPEC_HEAD
        "  - name: cuda-validation\n"
        "    image: FILLED_BY_THE_VALIDATOR\n"
        "    imagePullPolicy: FILLED_BY_THE_VALIDATOR\n"
        "    command: [\"gpu-validator\", \"cuda-check\"]\n"
        "    env:\n"
        "    - name: NVIDIA_VISIBLE_DEVICES\n"
        "      value: all\n"
        "    securityContext:\n"
        "      privileged: true\n"
        INIT_CONTAINER_RESOURCES
        "  containers:\n"
        "  - name: nvidia-cuda-validator\n"
        "    image: FILLED_BY_THE_VALIDATOR\n"
        "    imagePullPolicy: FILLED_BY_THE_VALIDATOR\n"
        "    command: [\"sh\", \"-c\"]\n"
        "    args: [\"echo cuda workload validation is successful\"]\n"
        "    securityContext:\n"
        "      privileged: true\n"
        MAIN_CONTAINER_TAIL;

static const char plugin_yaml[] =
        "apiVersion: v1\n"
        "kind: Pod\n"
        "metadata:\n"
        "  generateName: nvidia-device-plugin-validator-\n"
        "  namespace: FILLED_BY_THE_VALIDATOR\n"
        "  labels:\n"
        "    app: nvidia-device-plugin-validator\n"
        "    sidecar.istio.io/inject: \"false\"\n"
        "  annotations:\n"
        ANNOTATIONS_TAIL_AND_SPEC_HEAD
        "  - name: plugin-validation\n"
        "    image: FILLED_BY_THE_VALIDATOR\n"
        "    imagePullPolicy: FILLED_BY_THE_VALIDATOR\n"
        "    command: [\"gpu-validator\", \"cuda-check\"]\n"
        "    securityContext:\n"
        "      allowPrivilegeEscalation: false\n"
        INIT_CONTAINER_RESOURCES
        "        FILLED_BY_THE_VALIDATOR: 1\n"
        "  containers:\n"
        "  - name: nvidia-device-plugin-validator\n"
        "    image: FILLED_BY_THE_VALIDATOR\n"
        "    imagePullPolicy: FILLED_BY_THE_VALIDATOR\n"
        "    command: [\"sh\", \"-c\"]\n"
        "    args: [\"echo device-plugin workload validation is successful\"]\n"
        "    securityContext:\n"
        "      allowPrivilegeEscalation: false\n"
        MAIN_CONTAINER_TAIL;

const char *gv_workload_default_yaml(gv_workload_kind_t kind)
{
        return kind == GV_WORKLOAD_PLUGIN ? plugin_yaml : cuda_yaml;
}
