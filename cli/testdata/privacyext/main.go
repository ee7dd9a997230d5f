// Command privacyext is dprepro with Go-extension methods whose privacy
// claims differ from the level the harness hands them, for the process
// tests of cli (privacy_test.go): the harness must flag a claim below the
// level as it flags one above it, book the larger, and label both as
// declared by the method.
//
//	go-tenth      learner: the exact fit, claiming ε/10 of the level (under)
//	go-double     learner: the exact fit, claiming 2ε (over)
//	go-hundredth  hypothesis generator: output perturbation whose
//	              independent releases claim ε/100 of the ε asked (under)
package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/dprepro/dprepro/cli"
	"github.com/dprepro/dprepro/core/accfirst"
	"github.com/dprepro/dprepro/core/expost"
	"github.com/dprepro/dprepro/core/privacy"
	"github.com/dprepro/dprepro/methods/generators"
	"github.com/dprepro/dprepro/methods/learners"
)

// scaled is a learner releasing the exact regularized fit (no noise: its
// claims are wrong on purpose) and claiming factor·ε of its level.
type scaled struct {
	name   string
	factor float64
}

func (s scaled) Name() string { return s.name }

func (s scaled) Fit(ctx context.Context, rng *rand.Rand, train *learners.Data, lambda float64, level learners.Level) (learners.Model, privacy.Guarantee, error) {
	m, _, err := learners.NonPrivate{}.Fit(ctx, rng, train, lambda, level)
	return m, privacy.EpsDP(s.factor*level.Epsilon, fmt.Sprintf("%s: %g of the level", s.name, s.factor)), err
}

// hundredth is output perturbation (Ligett et al. 2017, Algorithm 5)
// whose independent releases claim ε/100 of the ε asked.
type hundredth struct{ accfirst.Output }

func (hundredth) Name() string { return "go-hundredth" }

func (h hundredth) Independent(ctx context.Context, rng *rand.Rand, s accfirst.Setting, epsilon float64) (expost.Hypothesis, privacy.Guarantee, error) {
	hyp, g, err := h.Output.Independent(ctx, rng, s, epsilon)
	g.Epsilon /= 100
	return hyp, g, err
}

func main() {
	for _, err := range []error{
		learners.Register(scaled{"go-tenth", 0.1}),
		learners.Register(scaled{"go-double", 2}),
		generators.Register(hundredth{}),
	} {
		if err != nil {
			fmt.Fprintln(os.Stderr, "privacyext:", err)
			os.Exit(1)
		}
	}
	os.Exit(cli.Main())
}
