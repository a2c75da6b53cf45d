"""Demo: seed 000's wandering gradient, clipped by value and by norm at every frame."""

from __future__ import annotations

import ipywidgets
import numpy as np
from matplotlib.patches import Circle, Rectangle

from clipkit import plots
from clipkit.compare import compare_clipping, wandering_simulation
from clipkit.widgets.demo import Demo, float_slider, int_slider

N_FRAMES = 240
BOX = 3.0  # the walk stays in [-3, 3]^2 (compare.wandering_gradient's default)
TRAIL = 25  # frames of the gradient's recent path drawn behind it


class WanderingGradientDemo(Demo):
    """A Play button (linked to the frame slider) walks the gradient; a slider sets v.

    Left: the gradient (dashed, as in the seed), its value-clipped (orange) and norm-clipped
    (blue) versions, the box ``|g_i| <= v`` and the ball ``||g|| <= v``. Right: the angle
    of each clipped version to the gradient over all frames, with a cursor at the frame shown.
    The walk is computed once (:func:`clipkit.compare.wandering_simulation`, seed 0); moving
    v re-clips all frames in one batched call.
    """

    caption = (
        "Press Play: the blue angle stays at 0; the orange one jumps whenever an entry passes v."
    )
    readout_fields = (
        ("frame", "frame", "d"),
        ("angle_by_value", "turn by value (°)", ".1f"),
        ("angle_by_norm", "turn by norm (°)", ".1f"),
        ("mean_angle_by_value", "mean turn by value, all frames (°)", ".1f"),
        ("turned_fraction", "frames turned by value", ".0%"),
    )

    def __init__(self, n_frames: int = N_FRAMES, seed: int = 0, **initial):
        self.n_frames, self.seed = n_frames, seed
        self._sim = wandering_simulation(n_frames, 1.0, seed=seed)
        self._path = self._sim.clipped.gradient.double()
        self._clipped = {}  # threshold -> Clipped over all frames
        super().__init__(**initial)

    def build_controls(self):
        return {
            "frame": int_slider("frame", 0, 0, self.n_frames - 1),
            "v": float_slider("threshold v", 1.0, 0.25, 3.0, 0.05),
        }

    def control_box(self):
        # Built after the initial values are set: Play starts at the slider's frame, because
        # jslink copies Play's value to the slider when the browser first shows them.
        frame = self.controls["frame"]
        self.play = ipywidgets.Play(
            value=frame.value, min=0, max=self.n_frames - 1, step=1, interval=120
        )
        # in the browser: Play moves the slider without a round trip through the kernel
        self.link = ipywidgets.jslink((self.play, "value"), (frame, "value"))
        return ipywidgets.VBox([ipywidgets.HBox([self.play, frame]), self.controls["v"]])

    def clipped(self, v: float):
        """Every frame clipped at ``v`` (cached: Play moves the frame, not v)."""
        if v not in self._clipped:
            self._clipped = {v: compare_clipping(self._path, v)}
        return self._clipped[v]

    def build_figure(self):
        fig, (plane, angles) = plots.new_figure(ncols=2, width=9.0, height=4.0)
        c = plots.COLORS
        plane.set_aspect("equal")
        lim = BOX + 0.3
        plane.set_xlim(-lim, lim)
        plane.set_ylim(-lim, lim)
        plane.axhline(0, color=c["reference"], linewidth=0.8)
        plane.axvline(0, color=c["reference"], linewidth=0.8)
        plots.label(plane, "entry g1", "entry g2", "the gradient wanders")
        self._ball = self.moving(Circle((0, 0), 1.0, fill=False, color=c["clipped"], ls="--"))
        self._box = self.moving(
            Rectangle((-1, -1), 2, 2, fill=False, color=c["tangent"], ls="--", linewidth=1.2)
        )
        plane.add_patch(self._ball)
        plane.add_patch(self._box)
        (self._trail,) = plane.plot([], [], color=c["reference"], linewidth=1, alpha=0.6)
        (self._g,) = plane.plot([], [], "--", color=c["point"], linewidth=2, label="gradient")
        (self._by_value,) = plane.plot([], [], color=c["tangent"], linewidth=3, label="by value")
        (self._by_norm,) = plane.plot([], [], color=c["clipped"], linewidth=3, label="by norm")
        for artist in (self._trail, self._g, self._by_value, self._by_norm):
            self.moving(artist)
        plots.legend(plane, loc="lower left")

        frames = np.arange(self.n_frames)
        (self._angle_value,) = angles.plot(frames, frames * 0.0, color=c["tangent"], label="value")
        (self._angle_norm,) = angles.plot(frames, frames * 0.0, color=c["clipped"], label="norm")
        self.moving(self._angle_value)
        self.moving(self._angle_norm)
        self._cursor = self.moving(angles.axvline(0, color=c["point"], linewidth=1, ls=":"))
        (self._marks,) = angles.plot([], [], "o", color=c["point"], markersize=6)
        self.moving(self._marks)
        angles.set_xlim(0, self.n_frames - 1)
        angles.set_ylim(-2, 50)
        angles.axhline(45, color=c["reference"], linewidth=1, ls=":")  # value clipping's bound
        plots.label(angles, "frame", "angle to the gradient (°)", "how far each one turns")
        plots.legend(angles, loc="upper right")
        return fig

    def compute(self, frame, v):
        frame, v = int(frame), float(v)
        r = self.clipped(v)
        turned = r.angle_by_value > 1e-9
        g, bv, bn = r.gradient[frame], r.by_value[frame], r.by_norm[frame]
        return {
            "frame": frame,
            "v": v,
            "g1": g[0].item(),
            "g2": g[1].item(),
            "norm": r.norm[frame].item(),
            "by_value_1": bv[0].item(),
            "by_value_2": bv[1].item(),
            "by_norm_1": bn[0].item(),
            "by_norm_2": bn[1].item(),
            "angle_by_value": r.angle_by_value[frame].item(),
            "angle_by_norm": r.angle_by_norm[frame].item(),
            "mean_angle_by_value": r.angle_by_value.mean().item(),
            "max_angle_by_norm": r.angle_by_norm.max().item(),
            "turned_fraction": turned.double().mean().item(),
        }

    def draw(self, s):
        v, frame = s["v"], s["frame"]
        self._ball.set_radius(v)
        self._box.set_bounds(-v, -v, 2 * v, 2 * v)
        path = self._path.numpy()
        lo = max(0, frame - TRAIL)
        self._trail.set_data(path[lo : frame + 1, 0], path[lo : frame + 1, 1])
        self._g.set_data([0, s["g1"]], [0, s["g2"]])
        self._by_value.set_data([0, s["by_value_1"]], [0, s["by_value_2"]])
        self._by_norm.set_data([0, s["by_norm_1"]], [0, s["by_norm_2"]])
        r = self.clipped(v)
        self._angle_value.set_ydata(r.angle_by_value.numpy())
        self._angle_norm.set_ydata(r.angle_by_norm.numpy())
        self._cursor.set_xdata([frame, frame])
        self._marks.set_data([frame, frame], [s["angle_by_value"], s["angle_by_norm"]])
