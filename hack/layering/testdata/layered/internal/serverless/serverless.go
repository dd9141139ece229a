// Package serverless is named like the server but is not under it.
package serverless
