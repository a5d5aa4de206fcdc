// Package version holds the operator's own version, stamped at build time.
package version
