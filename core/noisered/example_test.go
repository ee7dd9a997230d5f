package noisered_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/dprepro/dprepro/core/noisered"
)

// Release three counts (ℓ1 sensitivity 1) at nine privacy levels from
// ε = 0.5 to ε = 8 (keep probability (ε_t/ε_{t+1})² = 1/2 per step), most
// private first, stopping when a (here fictitious) accuracy test passes at
// t = 6: the released prefix v̂_1…v̂_6 costs ε_6 ≈ 2.83, not
// ε_1 + … + ε_6. The seeded generator makes the output
// reproducible; it is a simulation, not secure noise.
func ExampleNew() {
	rng := rand.New(rand.NewPCG(1, 2))
	eps, err := noisered.Geometric(0.5, 8, 9)
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := noisered.New(rng, []float64{120, 45, 300}, 1, eps)
	if err != nil {
		fmt.Println(err)
		return
	}
	for c.Next() {
		fmt.Printf("t=%d ε=%.3f changed=%v v̂=%.3f\n", c.Step(), c.Epsilon(), c.Changed(), c.Value())
		if c.Step() == 6 {
			break
		}
	}
	fmt.Printf("privacy loss of the prefix: ε = %.3f\n", c.Epsilon())

	_, err = noisered.New(rng, []float64{1}, 1, []float64{1, 0.5})
	fmt.Println(err)
	// Output:
	// t=1 ε=0.500 changed=[0 1 2] v̂=[127.370 47.466 296.141]
	// t=2 ε=0.707 changed=[0 1] v̂=[121.529 46.339 296.141]
	// t=3 ε=1.000 changed=[1 2] v̂=[121.529 46.291 297.060]
	// t=4 ε=1.414 changed=[0 1 2] v̂=[120.511 46.103 299.537]
	// t=5 ε=2.000 changed=[1 2] v̂=[120.511 45.572 300.852]
	// t=6 ε=2.828 changed=[0 1 2] v̂=[120.059 45.270 300.200]
	// privacy loss of the prefix: ε = 2.828
	// noisered: new: eps must be strictly increasing (eps[0] = 1, eps[1] = 0.5)
}

// The literal Algorithm 1 returns all T levels at once.
func ExampleReduce() {
	rng := rand.New(rand.NewPCG(1, 2))
	out, err := noisered.Reduce(rng, []float64{120, 45}, 1, []float64{0.1, 1, 10})
	if err != nil {
		fmt.Println(err)
		return
	}
	for t, v := range out {
		fmt.Printf("v̂_%d = %.3f\n", t+1, v)
	}
	// Output:
	// v̂_1 = [115.982 38.993]
	// v̂_2 = [119.892 44.739]
	// v̂_3 = [120.044 44.992]
}

func ExampleGeometric() {
	eps, err := noisered.Geometric(1e-5, 70, 1000)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("T = %d, ε_1 = %g, ε_2 = %.6g, ε_T = %g\n", len(eps), eps[0], eps[1], eps[len(eps)-1])
	// Output:
	// T = 1000, ε_1 = 1e-05, ε_2 = 1.0159e-05, ε_T = 70
}
