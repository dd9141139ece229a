package reposerver

import "time"

// fakeClock is a settable clock for TTL tests.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time          { return c.now }
func (c *fakeClock) Advance(d time.Duration) { c.now = c.now.Add(d) }

const configMapYAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  level: info
`
