package testcluster

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Gone is a condition for testwait: it holds once the object named like obj
// (its namespace and name; obj's type says the kind) is no longer found.
// Any other error of the read is what the condition saw.
func Gone(c client.Reader, obj client.Object) func() error {
	key := client.ObjectKeyFromObject(obj)
	read := obj.DeepCopyObject().(client.Object) // obj itself stays as the caller left it
	return func() error {
		err := c.Get(context.Background(), key, read)
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return err
		}
		return fmt.Errorf("%T %s is still there", obj, key)
	}
}
