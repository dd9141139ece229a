package testcluster

import "context"

// ErrPortTaken is errPortTaken, for the tests of package testcluster_test.
var ErrPortTaken = errPortTaken

// StartControllerManager runs, in dir, a kube-controller-manager of c's
// cluster that serves on port, as Start does, and stops it again.
func StartControllerManager(ctx context.Context, c *Cluster, dir string, port int) error {
	bins, err := EnsureBinaries()
	if err != nil {
		return err
	}
	other := &Cluster{Dir: dir, Kubeconfig: c.Kubeconfig}
	defer other.Stop()
	return other.startController(ctx, "kube-controller-manager", bins.ControllerManager, port)
}
