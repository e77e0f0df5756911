//! Total cost of ownership and cost per transaction (SPEC study 4): capital cost plus
//! the energy a configuration draws over its life, cooling included, divided by the
//! throughput it delivers. Pure arithmetic.

use crate::error::Invalid;
use serde::{Deserialize, Serialize};

/// Hours in a year (365.25 days).
pub const HOURS_PER_YEAR: f64 = 8766.0;

/// Cost inputs, as a study file's `[cost]` (or a configuration's own `cost`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostInputs {
    /// Capital cost of one server.
    pub server_capex: f64,
    /// Devices (disks, SSDs, cache cards) per server, and the price of each.
    #[serde(default)]
    pub devices: u32,
    #[serde(default)]
    pub device_capex: f64,
    /// Price of a kilowatt-hour.
    pub power_price_kwh: f64,
    /// Energy drawn for every unit the system draws, cooling included (1.5: cooling
    /// adds half again, a PUE of 1.5).
    #[serde(default = "one")]
    pub cooling_factor: f64,
    /// Years the system is paid for and powered (the paper: 4).
    pub years: f64,
    #[serde(default = "dollar")]
    pub currency: String,
}

fn one() -> f64 {
    1.0
}
fn dollar() -> String {
    "$".into()
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tco {
    pub capex: f64,
    /// kWh drawn over the years, cooling included.
    pub energy_kwh: f64,
    pub energy_cost: f64,
    pub total: f64,
    /// Total per unit of throughput (per tps, or per NOPM).
    pub per_throughput: f64,
}

impl CostInputs {
    /// `server_capex=9000,devices=8,device_capex=250,power_price_kwh=0.15,cooling_factor=1.5,years=4`
    /// (the `[cost]` keys of a study file).
    pub fn parse(s: &str) -> Result<CostInputs, Invalid> {
        let mut map = serde_json::Map::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) =
                part.split_once('=').ok_or_else(|| Invalid::Value(format!("--cost '{part}': write key=value")))?;
            let value = match v.trim().parse::<f64>() {
                // A count of devices, not rounded or clamped into one
                // (cost_devices_are_a_count: -5, 2.7 and 1e20 became 0, 2 and 4294967295).
                Ok(_) if k.trim() == "devices" => match v.trim().parse::<u32>() {
                    Ok(n) => serde_json::json!(n),
                    Err(_) => {
                        return Err(Invalid::Value(format!(
                            "--cost devices={}: a whole number of devices, 0 or more",
                            v.trim()
                        )))
                    }
                },
                Ok(n) => serde_json::json!(n),
                Err(_) => serde_json::json!(v.trim()),
            };
            map.insert(k.trim().to_string(), value);
        }
        let c: CostInputs = serde_json::from_value(serde_json::Value::Object(map)).map_err(|e| {
            Invalid::Value(format!(
                "--cost: {e}; keys are server_capex, devices, device_capex, power_price_kwh, cooling_factor, years, currency"
            ))
        })?;
        c.validate()?;
        Ok(c)
    }

    pub fn validate(&self) -> Result<(), Invalid> {
        let all = [self.server_capex, self.device_capex, self.power_price_kwh, self.cooling_factor, self.years];
        if all.iter().any(|v| !v.is_finite() || *v < 0.0) || self.cooling_factor < 1.0 || self.years <= 0.0 {
            return Err(Invalid::Value(
                "cost: amounts must be 0 or more, cooling_factor at least 1, years above 0".into(),
            ));
        }
        Ok(())
    }

    /// TCO of one server drawing `watts` on average and delivering `throughput`.
    pub fn tco(&self, watts: f64, throughput: f64) -> Tco {
        let capex = self.server_capex + self.devices as f64 * self.device_capex;
        let energy_kwh = watts / 1000.0 * HOURS_PER_YEAR * self.years * self.cooling_factor;
        let energy_cost = energy_kwh * self.power_price_kwh;
        let total = capex + energy_cost;
        Tco {
            capex,
            energy_kwh,
            energy_cost,
            total,
            per_throughput: if throughput > 0.0 { total / throughput } else { 0.0 },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tco_by_hand() {
        let c = CostInputs {
            server_capex: 10_000.0,
            devices: 4,
            device_capex: 500.0,
            power_price_kwh: 0.10,
            cooling_factor: 1.5,
            years: 4.0,
            currency: "$".into(),
        };
        let t = c.tco(200.0, 2_000.0);
        // 0.2 kW x 8766 h x 4 years x 1.5 = 10,519.2 kWh; x $0.10 = $1,051.92.
        assert_eq!(t.capex, 12_000.0);
        assert!((t.energy_kwh - 10_519.2).abs() < 1e-9);
        assert!((t.energy_cost - 1_051.92).abs() < 1e-9);
        assert!((t.total - 13_051.92).abs() < 1e-9);
        assert!((t.per_throughput - 6.52596).abs() < 1e-9);
        assert!(c.validate().is_ok());
        assert!(CostInputs { cooling_factor: 0.5, ..c.clone() }.validate().is_err());
        assert_eq!(c.tco(100.0, 0.0).per_throughput, 0.0);
        let parsed = CostInputs::parse(
            "server_capex=10000, devices=4, device_capex=500, power_price_kwh=0.1, cooling_factor=1.5, years=4",
        )
        .unwrap();
        assert_eq!(parsed, c);
        let missing = CostInputs::parse("server_capex=1,years=4").unwrap_err();
        assert!(matches!(&missing, Invalid::Value(m) if m.contains("power_price_kwh")), "{missing}");
        let unknown = CostInputs::parse("capex=1").unwrap_err();
        assert!(matches!(&unknown, Invalid::Value(m) if m.contains("keys are")), "{unknown}");
    }

    /// cost_devices_are_a_count: `devices=-5`, `2.7` and `1e20` silently became 0, 2 and
    /// 4294967295.
    #[test]
    fn cost_devices_are_a_count() {
        let base = "server_capex=1,power_price_kwh=0.1,years=4";
        for bad in ["-5", "2.7", "1e20"] {
            let e = CostInputs::parse(&format!("{base},devices={bad}")).unwrap_err();
            assert!(matches!(&e, Invalid::Value(m) if m.contains(&format!("devices={bad}: a whole number"))), "{e}");
        }
        assert_eq!(CostInputs::parse(&format!("{base},devices=8")).unwrap().devices, 8);
    }
}
