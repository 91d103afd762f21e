//! Reading the report's SVG charts in the report-file tests.

use plotters::style::RGBColor;

/// `#RRGGBB`, as the charts write a colour.
pub fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// Elements `<tag ...>` whose `attr` is `color`.
pub fn count(svg: &str, tag: &str, attr: &str, color: RGBColor) -> usize {
    let wanted = format!("{attr}=\"{}\"", hex(color));
    svg.split(&format!("<{tag} "))
        .skip(1)
        .filter(|e| e[..e.find('>').unwrap()].contains(&wanted))
        .count()
}

/// Fails unless `svg` reads as XML to its end.
pub fn assert_xml(svg: &str) {
    let mut reader = quick_xml::Reader::from_str(svg);
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("SVG is not XML: {e}"),
        }
    }
}
