// Package apply writes rendered objects to the API server.
package apply
