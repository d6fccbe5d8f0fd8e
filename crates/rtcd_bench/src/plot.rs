//! SVG line charts (plotters' SVG backend, line series only), with scene 1's phases marked.

use std::path::Path;

use plotters::prelude::*;

/// One named curve.
pub struct Series {
    /// Legend.
    pub name: String,
    /// Points (x, y).
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// A series from a name and points.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self { name: name.into(), points }
    }
}

/// A chart to draw.
pub struct Chart<'a> {
    /// Title.
    pub title: &'a str,
    /// X axis label.
    pub x_label: &'a str,
    /// Y axis label.
    pub y_label: &'a str,
    /// Logarithmic y axis (values ≤ 0 are left out).
    pub log_y: bool,
    /// Vertical markers: (x, label), e.g. phase starts.
    pub markers: Vec<(f64, String)>,
    /// The curves.
    pub series: Vec<Series>,
}

const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Draws `chart` into an SVG file at `path`.
pub fn draw(path: &Path, chart: &Chart) -> Result<(), String> {
    draw_inner(path, chart).map_err(|e| format!("{}: {e}", path.display()))
}

fn draw_inner(path: &Path, chart: &Chart) -> Result<(), Box<dyn std::error::Error>> {
    let keep = |y: f64| y.is_finite() && (!chart.log_y || y > 0.0);
    let pts = || chart.series.iter().flat_map(|s| s.points.iter()).filter(|p| keep(p.1) && p.0.is_finite());
    let (mut x0, mut x1, mut y0, mut y1) =
        (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for &(x, y) in pts() {
        (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
    }
    if !x0.is_finite() {
        (x0, x1, y0, y1) = (0.0, 1.0, if chart.log_y { 0.1 } else { 0.0 }, 1.0);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    if chart.log_y {
        (y0, y1) = (y0 / 1.5, y1 * 1.5);
    } else {
        let pad = ((y1 - y0) * 0.05).max(1e-9);
        (y0, y1) = (y0.min(0.0), y1 + pad);
    }
    let root = SVGBackend::new(path, (1000, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut builder = ChartBuilder::on(&root);
    builder.caption(chart.title, ("sans-serif", 20)).margin(12).x_label_area_size(40).y_label_area_size(70);
    // The same drawing on a linear or a logarithmic y axis (two coordinate types).
    macro_rules! fill {
        ($c:expr, $ylo:expr, $yhi:expr) => {{
            let c = $c;
            c.configure_mesh().x_desc(chart.x_label).y_desc(chart.y_label).draw()?;
            for (k, s) in chart.series.iter().enumerate() {
                let color = PALETTE[k % PALETTE.len()];
                // A point with a non-finite y breaks the line (gaps between timed windows).
                let segments: Vec<&[(f64, f64)]> =
                    s.points.split(|p| !p.1.is_finite()).filter(|g| !g.is_empty()).collect();
                for (i, g) in segments.iter().enumerate() {
                    let drawn = c.draw_series(LineSeries::new(
                        g.iter().copied().filter(|p| keep(p.1)),
                        color.stroke_width(2),
                    ))?;
                    if i == 0 {
                        drawn.label(s.name.clone()).legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                        });
                    }
                }
            }
            for (x, label) in &chart.markers {
                c.draw_series(LineSeries::new(vec![(*x, $ylo), (*x, $yhi)], BLACK.mix(0.5).stroke_width(1)))?;
                c.draw_series(std::iter::once(Text::new(
                    label.clone(),
                    (*x, $yhi),
                    ("sans-serif", 14).into_font(),
                )))?;
            }
            c.configure_series_labels().background_style(WHITE.mix(0.85)).border_style(BLACK).draw()?;
        }};
    }
    if chart.log_y {
        fill!(&mut builder.build_cartesian_2d(x0..x1, (y0..y1).log_scale())?, y0, y1 / 1.2);
    } else {
        fill!(&mut builder.build_cartesian_2d(x0..x1, y0..y1)?, y0, y1 - (y1 - y0) * 0.04);
    }
    root.present()?;
    Ok(())
}

/// [`smooth`] on each run of finite points separately, keeping the breaks.
pub fn smooth_segments(points: &[(f64, f64)], window: usize) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len());
    for (i, g) in points.split(|p| !p.1.is_finite()).enumerate() {
        if i > 0 {
            out.push((f64::NAN, f64::NAN));
        }
        out.extend(smooth(g, window));
    }
    out
}

/// Moving average over `window` points (centred), for noisy per-step curves.
pub fn smooth(points: &[(f64, f64)], window: usize) -> Vec<(f64, f64)> {
    if window <= 1 || points.len() < 3 {
        return points.to_vec();
    }
    let h = window / 2;
    (0..points.len())
        .map(|i| {
            let (a, b) = (i.saturating_sub(h), (i + h + 1).min(points.len()));
            let ys: Vec<f64> = points[a..b].iter().map(|p| p.1).filter(|y| y.is_finite()).collect();
            (points[i].0, if ys.is_empty() { f64::NAN } else { ys.iter().sum::<f64>() / ys.len() as f64 })
        })
        .collect()
}
