// Host-shareable layout: vec3 padding, @align/@size, arrays of structs, a runtime-sized array
// at the end of a struct; composites in registers: let arrays indexed at run time, component
// assignment, matrix columns and elements.
struct Particle {
    pos: vec3<f32>,      // offset 0, size 12, align 16
    mass: f32,           // offset 12 (fills the vec3's padding)
    vel: vec3<f32>,      // offset 16
    @align(16) id: u32,  // offset 32
    @size(12) tag: u32,  // offset 36, occupies 12 bytes
    flags: vec2<u32>,    // offset 48
}                        // size 64 (align 16)

struct Scene {
    count: u32,
    scale: f32,
    @align(16) origin: vec3<f32>,
    particles: array<Particle>,   // offset 32
}

struct Stats {
    total_mass: f32,
    centroid: vec3<f32>,          // offset 16
    m: mat3x3<f32>,               // offset 32, columns 16 bytes apart
    picks: array<f32, 4>,         // offset 80
    grid: array<array<u32, 3>, 2>,
}

@group(0) @binding(0) var<storage, read_write> scene: Scene;
@group(0) @binding(1) var<storage, read_write> stats: array<Stats>;

@compute @workgroup_size(4)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let n = arrayLength(&scene.particles);
    var s: Stats;
    var centroid = vec3<f32>(0.0);
    for (var k = 0u; k < n; k++) {
        let p = scene.particles[k];
        s.total_mass += p.mass;
        centroid += p.pos * p.mass;
    }
    s.centroid = centroid / s.total_mass;

    // move particle i: pos += vel * scale; write id-dependent fields
    let me = &scene.particles[i];
    (*me).pos += (*me).vel * scene.scale;
    me.tag = me.id * 2u + i;
    me.flags.y = n;
    scene.particles[i].flags[0] = 7u;

    // a let array indexed with a run-time value
    let table = array<f32, 4>(1.5, -2.0, 4.25, 8.0);
    let lut = array<vec2<i32>, 3>(vec2(1, 2), vec2(3, 4), vec2(5, 6));
    for (var j = 0u; j < 4u; j++) {
        s.picks[j] = table[(i + j) % 4u] + f32(lut[(i + j) % 3u].y);
    }

    // matrix columns and elements, written and read
    var m = mat3x3<f32>(1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0);
    m[1][2] = f32(i);
    m[2] = vec3<f32>(m[0][0], m[1].y, scene.origin.z);
    let col = m[i % 3u];
    m[0].x = col.z;
    s.m = m;

    // vector component assignment in a local, swizzles read back
    var v = vec4<u32>(i, 2u * i, 3u * i, 4u * i);
    v.y = 100u;
    v[3] = v.x + v.z;
    for (var r = 0u; r < 2u; r++) {
        for (var c = 0u; c < 3u; c++) {
            s.grid[r][c] = select(v.wzy[c], v.xyz[c], r == 0u) + r * 1000u;
        }
    }
    stats[i] = s;
}
