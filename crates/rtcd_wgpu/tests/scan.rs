//! Shader contract test of the compaction's prefix sum: the real WGSL on the device, against a CPU
//! scan, for sizes that use one, two and three levels.

mod common;

use rand::Rng;

#[test]
fn exclusive_scan_matches_the_cpu() {
    let d = common::device();
    let mut rng = common::rng(3);
    for n in [1usize, 5, 1023, 1024, 1025, 4097, 300_000, 1_100_000] {
        let data: Vec<u32> = (0..n).map(|_| rng.random_range(0..3u32)).collect();
        let gpu = rtcd_wgpu::scan::exclusive_scan(&d.device, &d.queue, &data).unwrap();
        assert_eq!(gpu.len(), n, "n = {n}");
        let mut acc = 0u32;
        for (i, (x, g)) in data.iter().zip(&gpu).enumerate() {
            assert_eq!(*g, acc, "n = {n}, index {i}");
            acc += x;
        }
    }
}

#[test]
fn scan_levels() {
    assert_eq!(rtcd_wgpu::scan::levels(1000).unwrap(), vec![1000]);
    assert_eq!(rtcd_wgpu::scan::levels(5000).unwrap(), vec![5000, 5]);
    assert_eq!(rtcd_wgpu::scan::levels(2_000_000).unwrap(), vec![2_000_000, 1954, 2]);
    assert!(rtcd_wgpu::scan::levels(u32::MAX).is_err());
}
