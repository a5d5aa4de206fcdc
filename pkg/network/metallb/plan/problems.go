package plan

import (
	"strings"

	"github.com/bmlb/cluster-network-operator/pkg/objects"
)

// A problem is told on its object, with what to do: something found beside
// MetalLB's objects that taking them over would make worse (another MetalLB's
// workloads, which would go on beside the module's; a Helm release, which
// would write back or delete what was taken over; a memberlist Secret the
// module's speakers cannot read), or a mistake in the user's configuration.
type problem struct {
	regarding       objects.Object
	reason, message string
}

// problemMessages joins what the problems say.
func problemMessages(problems []problem) string {
	messages := make([]string, len(problems))
	for i, c := range problems {
		messages[i] = c.message
	}
	return strings.Join(messages, " ")
}

// problemNotices tell each problem on its object.
func problemNotices(problems []problem) []Event {
	events := make([]Event, len(problems))
	for i, c := range problems {
		events[i] = notice(c.regarding, c.reason, c.message)
	}
	return events
}
