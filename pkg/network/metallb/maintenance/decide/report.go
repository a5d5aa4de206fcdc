package decide

import "slices"

// Report is which nodes are out of MetalLB's announcements, and which are
// held in them, and why.
type Report struct {
	Out  []Out
	Held []Held
}

// Out is a node maintenance took out of MetalLB's announcements, and why.
type Out struct{ Node, Why string }

// ReportOf is the report after a decision acted on the nodes: out are those
// marked that do not return, and those that leave.
func ReportOf(d Decision, nodes []Node) Report {
	rep := Report{Held: d.Held}
	for _, n := range nodes {
		why, marked := n.Annotations[MarkAnnotation]
		if leaving, ok := d.Leave[n.Name]; ok {
			why, marked = leaving, true
		}
		if marked && !slices.Contains(d.Return, n.Name) {
			rep.Out = append(rep.Out, Out{Node: n.Name, Why: why})
		}
	}
	return rep
}
