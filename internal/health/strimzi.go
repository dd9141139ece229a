package health

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// kafkaHealth judges a Strimzi Kafka cluster: NotReady=True is Degraded
// unless the cluster is still being created; Ready=True is Healthy.
func kafkaHealth(obj *unstructured.Unstructured) Result {
	for _, c := range conditions(obj.Object) {
		switch {
		case c.Type == "NotReady" && c.Status == "True" && c.Reason != "Creating":
			return Result{Status: Degraded, Message: c.Message}
		case c.Type == "Ready" && c.Status == "True":
			return Result{Status: Healthy}
		}
	}
	return Result{Status: Progressing, Message: "Waiting for Kafka Cluster"}
}
