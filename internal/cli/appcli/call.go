package appcli

import "context"

// Call sends a request to the API server with the errors of the Backend's
// methods: ErrNotLoggedIn for a 401, a *ServerError for another error
// answer. `skiff rollout` talks to the same server through it.
func (a *API) Call(ctx context.Context, method, path string, body, into any) error {
	return a.call(ctx, method, path, body, into)
}
