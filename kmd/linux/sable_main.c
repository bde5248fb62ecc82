// SPDX-License-Identifier: GPL-2.0
/*
 * Sable NPU: a platform driver bound by device tree ("sable,npu"), exposing the UAPI of
 * kmd/include/uapi/sable_uapi.h on a misc character device /dev/sable-npuN.
 *
 * First slice (docs/kmd.md): probe maps the NPU's CSR window and the host-interface block,
 * identifies the NPU from its ID/VERSION/CONFIG_ID/HWCFG registers, requests the host interrupt
 * and registers the device node. SABLE_IOCTL_HANDSHAKE and SABLE_IOCTL_GET_INFO are
 * implemented (through kmd/core); every other request returns -EOPNOTSUPP until buffer
 * objects, programs, jobs and fences are implemented here. debugfs shows counters.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/mod_devicetable.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "sable_npu.h"

static DEFINE_IDA(sable_ida);

/* One open file of the device node: a client of the UAPI. */
struct sable_client {
	struct sable_npu *npu;
	bool handshaken; /* READ_ONCE/WRITE_ONCE: ioctls of one file may run concurrently */
};

static int sable_open(struct inode *inode, struct file *file)
{
	struct sable_npu *npu = container_of(file->private_data, struct sable_npu, misc);
	struct sable_client *client;

	client = kzalloc(sizeof(*client), GFP_KERNEL);
	if (!client)
		return -ENOMEM;
	client->npu = npu;
	file->private_data = client;
	atomic64_inc(&npu->stats.opens);
	return 0;
}

static int sable_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
	return 0;
}

static long sable_ioctl_handshake(struct sable_client *client, void __user *uarg)
{
	struct sable_npu *npu = client->npu;
	struct sable_uapi_handshake arg;
	int err;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	err = sable_core_handshake(&npu->ids, &arg);
	/* Copied back on refusal too: the message says what to rebuild. */
	if (copy_to_user(uarg, &arg, sizeof(arg)))
		return -EFAULT;
	if (err) {
		atomic64_inc(&npu->stats.handshakes_refused);
		dev_dbg(npu->dev, "handshake refused: %s\n", arg.message);
		return err;
	}
	atomic64_inc(&npu->stats.handshakes);
	WRITE_ONCE(client->handshaken, true);
	return 0;
}

static long sable_ioctl_get_info(struct sable_client *client, void __user *uarg)
{
	struct sable_npu *npu = client->npu;
	struct sable_uapi_device_info info;

	memset(&info, 0, sizeof(info));
	sable_core_device_info(&npu->ids, &info);
	strscpy(info.device_name, npu->name, sizeof(info.device_name));
	strscpy(info.backend, "fpga", sizeof(info.backend));
	/* No device memory is managed yet: 0 bytes, 0 free (docs/kmd.md). */
	if (copy_to_user(uarg, &info, sizeof(info)))
		return -EFAULT;
	return 0;
}

/* Whether cmd is one of the UAPI's requests (kmd/include/uapi/sable_uapi.h). */
static bool sable_uapi_request(unsigned int cmd)
{
	switch (cmd) {
	case SABLE_IOCTL_HANDSHAKE:
	case SABLE_IOCTL_GET_INFO:
	case SABLE_IOCTL_BO_CREATE:
	case SABLE_IOCTL_BO_FREE:
	case SABLE_IOCTL_PROGRAM_REGISTER:
	case SABLE_IOCTL_PROGRAM_RELEASE:
	case SABLE_IOCTL_JOB_SUBMIT:
	case SABLE_IOCTL_FENCE_WAIT:
	case SABLE_IOCTL_JOB_STATUS:
	case SABLE_IOCTL_FENCE_RELEASE:
		return true;
	default:
		return false;
	}
}

static long sable_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct sable_client *client = file->private_data;
	void __user *uarg = (void __user *)arg;

	atomic64_inc(&client->npu->stats.ioctls);
	if (!sable_uapi_request(cmd))
		return -ENOTTY;
	if (cmd != SABLE_IOCTL_HANDSHAKE && !READ_ONCE(client->handshaken))
		return -EPROTO; /* the UAPI: the handshake comes first */
	switch (cmd) {
	case SABLE_IOCTL_HANDSHAKE:
		return sable_ioctl_handshake(client, uarg);
	case SABLE_IOCTL_GET_INFO:
		return sable_ioctl_get_info(client, uarg);
	default:
		/* NOT YET IMPLEMENTED in the module (docs/kmd.md, "What is not done"). */
		atomic64_inc(&client->npu->stats.ioctls_not_implemented);
		return -EOPNOTSUPP;
	}
}

static const struct file_operations sable_fops = {
	.owner = THIS_MODULE,
	.open = sable_open,
	.release = sable_release,
	.unlocked_ioctl = sable_ioctl,
	/* Every UAPI struct has fixed-size fields and explicit padding. */
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/*
 * The host interrupt is a pulse from the host-interface block (the firmware writes HOST_IRQ
 * after publishing completions), so nothing is acknowledged here. Draining the completion ring
 * (sable_core_process_completions, which sleeps on the mutex) will run in a threaded handler
 * once the rings are set up; this slice only counts.
 */
static irqreturn_t sable_irq(int irq, void *data)
{
	struct sable_npu *npu = data;

	atomic64_inc(&npu->stats.irqs);
	return IRQ_HANDLED;
}

static int sable_counters_show(struct seq_file *s, void *unused)
{
	struct sable_npu *npu = s->private;
	struct sable_core_counters core;

	sable_core_get_counters(&npu->core, &core);
	seq_printf(s, "irqs %lld\n", (long long)atomic64_read(&npu->stats.irqs));
	seq_printf(s, "opens %lld\n", (long long)atomic64_read(&npu->stats.opens));
	seq_printf(s, "handshakes %lld\n", (long long)atomic64_read(&npu->stats.handshakes));
	seq_printf(s, "handshakes_refused %lld\n",
		   (long long)atomic64_read(&npu->stats.handshakes_refused));
	seq_printf(s, "ioctls %lld\n", (long long)atomic64_read(&npu->stats.ioctls));
	seq_printf(s, "ioctls_not_implemented %lld\n",
		   (long long)atomic64_read(&npu->stats.ioctls_not_implemented));
	seq_printf(s, "jobs_submitted %llu\n", core.jobs_submitted);
	seq_printf(s, "jobs_completed %llu\n", core.jobs_completed);
	seq_printf(s, "jobs_failed %llu\n", core.jobs_failed);
	seq_printf(s, "submit_ring_full %llu\n", core.submit_ring_full);
	seq_printf(s, "fence_table_full %llu\n", core.fence_table_full);
	seq_printf(s, "wait_timeouts %llu\n", core.wait_timeouts);
	seq_printf(s, "stray_completions %llu\n", core.stray_completions);
	seq_printf(s, "ring_faults %llu\n", core.ring_faults);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sable_counters);

static int sable_ids_show(struct seq_file *s, void *unused)
{
	struct sable_npu *npu = s->private;
	const struct sable_core_device_ids *ids = &npu->ids;

	seq_printf(s, "id 0x%08x\nversion 0x%08x\nconfig_id 0x%08x\n", ids->id, ids->version,
		   ids->config_id);
	seq_printf(s, "hwcfg 0x%08x 0x%08x 0x%08x\n", ids->hwcfg[0], ids->hwcfg[1],
		   ids->hwcfg[2]);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sable_ids);

static void sable_ida_free(void *data)
{
	ida_free(&sable_ida, (int)(long)data);
}

static void sable_misc_deregister(void *data)
{
	misc_deregister(data);
}

static void sable_debugfs_remove(void *data)
{
	debugfs_remove_recursive(data);
}

static int sable_map(struct platform_device *pdev, const char *name, void __iomem **base,
		     resource_size_t *size)
{
	struct resource *res;

	res = platform_get_resource_byname(pdev, IORESOURCE_MEM, name);
	if (!res)
		return dev_err_probe(&pdev->dev, -EINVAL, "no \"%s\" in reg-names\n", name);
	if (resource_size(res) < sizeof(u32))
		return dev_err_probe(&pdev->dev, -EINVAL, "\"%s\" window is too small\n", name);
	*base = devm_ioremap_resource(&pdev->dev, res);
	if (IS_ERR(*base))
		return PTR_ERR(*base);
	*size = resource_size(res);
	return 0;
}

static int sable_probe(struct platform_device *pdev)
{
	struct device *dev = &pdev->dev;
	struct sable_npu *npu;
	u32 isa;
	int err;

	npu = devm_kzalloc(dev, sizeof(*npu), GFP_KERNEL);
	if (!npu)
		return -ENOMEM;
	npu->dev = dev;
	err = sable_map(pdev, "npu", &npu->csr, &npu->csr_size);
	if (err)
		return err;
	err = sable_map(pdev, "hostif", &npu->hostif, &npu->hostif_size);
	if (err)
		return err;
	if (npu->hostif_size < SABLE_HOSTIF_DOORBELL + sizeof(u32))
		return dev_err_probe(dev, -EINVAL, "\"hostif\" window is too small\n");

	sable_npu_os_init(npu);
	sable_core_init(&npu->core, &npu->os);
	err = sable_core_identify(&npu->os, &npu->ids);
	if (err)
		return dev_err_probe(dev, err, "no Sable NPU here: ID register reads 0x%08x\n",
				     readl(npu->csr));

	npu->irq = platform_get_irq(pdev, 0);
	if (npu->irq < 0)
		return npu->irq;
	err = devm_request_irq(dev, npu->irq, sable_irq, 0, dev_name(dev), npu);
	if (err)
		return dev_err_probe(dev, err, "cannot request IRQ %d\n", npu->irq);

	npu->id = ida_alloc(&sable_ida, GFP_KERNEL);
	if (npu->id < 0)
		return npu->id;
	err = devm_add_action_or_reset(dev, sable_ida_free, (void *)(long)npu->id);
	if (err)
		return err;
	snprintf(npu->name, sizeof(npu->name), "sable-npu%d", npu->id);

	npu->misc.minor = MISC_DYNAMIC_MINOR;
	npu->misc.name = npu->name;
	npu->misc.fops = &sable_fops;
	npu->misc.parent = dev;
	err = misc_register(&npu->misc);
	if (err)
		return dev_err_probe(dev, err, "cannot register /dev/%s\n", npu->name);
	err = devm_add_action_or_reset(dev, sable_misc_deregister, &npu->misc);
	if (err)
		return err;

	npu->debugfs = debugfs_create_dir(npu->name, NULL);
	debugfs_create_file("counters", 0444, npu->debugfs, npu, &sable_counters_fops);
	debugfs_create_file("ids", 0444, npu->debugfs, npu, &sable_ids_fops);
	err = devm_add_action_or_reset(dev, sable_debugfs_remove, npu->debugfs);
	if (err)
		return err;

	platform_set_drvdata(pdev, npu);
	isa = sable_core_isa_version(npu->ids.version);
	dev_info(dev, "Sable NPU, ISA %u.%u, configuration 0x%08x: /dev/%s\n", isa >> 16,
		 isa & 0xffff, npu->ids.config_id, npu->name);
	return 0;
}

static const struct of_device_id sable_of_match[] = {
	{ .compatible = "sable,npu" },
	{ }
};
MODULE_DEVICE_TABLE(of, sable_of_match);

static struct platform_driver sable_driver = {
	.probe = sable_probe,
	.driver = {
		.name = "sable-npu",
		.of_match_table = sable_of_match,
		/*
		 * Open files point at the device's state: no unbinding through sysfs while the
		 * module is loaded (and the module stays while a file is open).
		 */
		.suppress_bind_attrs = true,
	},
};
module_platform_driver(sable_driver);

MODULE_DESCRIPTION("Sable NPU driver (first slice: handshake and device info)");
MODULE_LICENSE("GPL");
