package rollout

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/dump"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// PodTemplateHashLabel is the label that ties a ReplicaSet, its selector, its
// pod template and its pods to one revision of a Rollout's pod template.
const PodTemplateHashLabel = "rollouts-pod-template-hash"

// PodTemplateHash returns the hash that names a Rollout's ReplicaSet for
// template. It is computed the way Kubernetes and Argo Rollouts compute
// pod-template-hash: FNV-32a over the deep dump of the template, followed by
// the collision count (little endian, eight bytes) when there is one, encoded
// with the alphabet that avoids vowels. The template must be the one of the
// Rollout spec, before the hash label is added.
func PodTemplateHash(template *corev1.PodTemplateSpec, collisionCount *int32) string {
	hasher := fnv.New32a()
	fmt.Fprintf(hasher, "%v", dump.ForHash(*template))
	if collisionCount != nil {
		buf := make([]byte, 8)
		binary.LittleEndian.PutUint32(buf, uint32(*collisionCount))
		_, _ = hasher.Write(buf)
	}
	return rand.SafeEncodeString(fmt.Sprint(hasher.Sum32()))
}

// StepHash returns status.currentStepHash for a canary: the FNV-32a hash of
// the JSON of its steps, so a change of steps restarts them. Blue-green
// rollouts have no step hash.
func StepHash(strategy v1alpha1.RolloutStrategy) string {
	if strategy.BlueGreen != nil || strategy.Canary == nil {
		return ""
	}
	data, err := json.Marshal(strategy.Canary.Steps)
	if err != nil {
		// Steps are plain data; marshalling them cannot fail.
		panic(fmt.Sprintf("marshalling canary steps: %v", err))
	}
	hasher := fnv.New32a()
	_, _ = hasher.Write(data)
	return rand.SafeEncodeString(fmt.Sprint(hasher.Sum32()))
}
