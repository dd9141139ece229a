package rollout

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/skiffcd/skiff/api/v1alpha1"
)

// PodTemplateHashLabel is the label that ties a ReplicaSet, its selector, its
// pod template and its pods to one revision of a Rollout's pod template.
const PodTemplateHashLabel = "rollouts-pod-template-hash"

// PodTemplateHash returns the hash that names a Rollout's ReplicaSet for
// template, computed as Argo Rollouts (since v1.2) computes it: FNV-32a over
// the template's JSON, followed by the collision count (little endian, eight
// bytes) when there is one, encoded with the alphabet that avoids vowels. The
// template must be the one of the Rollout spec, before the hash label is
// added. JSON leaves out unset fields, so a k8s.io/api upgrade that adds
// PodSpec fields keeps the hash of a template that does not use them; a
// ReplicaSet of the template under another hash is still found by
// SameTemplate.
func PodTemplateHash(template *corev1.PodTemplateSpec, collisionCount *int32) string {
	return jsonHash(template, collisionCount)
}

// StepHash returns status.currentStepHash for a canary: the FNV-32a hash of
// the JSON of its steps, so a change of steps restarts them. Blue-green
// rollouts have no step hash.
func StepHash(strategy v1alpha1.RolloutStrategy) string {
	if strategy.BlueGreen != nil || strategy.Canary == nil {
		return ""
	}
	return jsonHash(strategy.Canary.Steps, nil)
}

// jsonHash is Argo Rollouts' hash of plain data: FNV-32a over its JSON, then
// the collision count if any, safely encoded.
func jsonHash(v any, collisionCount *int32) string {
	data, err := json.Marshal(v)
	if err != nil {
		// Pod templates and steps are plain data; marshalling them cannot fail.
		panic(fmt.Sprintf("marshalling %T for its hash: %v", v, err))
	}
	hasher := fnv.New32a()
	_, _ = hasher.Write(data)
	if collisionCount != nil {
		buf := make([]byte, 8)
		binary.LittleEndian.PutUint32(buf, uint32(*collisionCount))
		_, _ = hasher.Write(buf)
	}
	return rand.SafeEncodeString(fmt.Sprint(hasher.Sum32()))
}
